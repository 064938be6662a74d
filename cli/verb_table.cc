// The CLI's dispatch table: adding a verb is one Make declaration and one row.
#include "cli/verb.h"

namespace schedcache::cli {

std::unique_ptr<Verb> MakeTopologyVerb();
std::unique_ptr<Verb> MakeDemoVerb();
std::unique_ptr<Verb> MakePoliciesVerb();
std::unique_ptr<Verb> MakeSessionVerb();
std::unique_ptr<Verb> MakeFeedVerb();
std::unique_ptr<Verb> MakeRecommendVerb();
std::unique_ptr<Verb> MakeWatchVerb();
std::unique_ptr<Verb> MakeReportVerb();
std::unique_ptr<Verb> MakeAbVerb();
std::unique_ptr<Verb> MakeSweepVerb();
std::unique_ptr<Verb> MakeRecordVerb();
std::unique_ptr<Verb> MakeAbMergeVerb();
std::unique_ptr<Verb> MakeMirrorVerb();

namespace {

constexpr VerbEntry kVerbs[] = {
    {"topology", &MakeTopologyVerb},
    {"demo", &MakeDemoVerb},
    {"policies", &MakePoliciesVerb},
    {"session", &MakeSessionVerb},
    {"feed", &MakeFeedVerb},
    {"recommend", &MakeRecommendVerb},
    {"watch", &MakeWatchVerb},
    {"report", &MakeReportVerb},
    {"ab", &MakeAbVerb},
    {"sweep", &MakeSweepVerb},
    {"record", &MakeRecordVerb},
    {"ab-merge", &MakeAbMergeVerb},
    {"mirror", &MakeMirrorVerb},
};

}  // namespace

std::span<const VerbEntry> Verbs() { return kVerbs; }

}  // namespace schedcache::cli
