// The CLI's dispatch table: adding a verb is one Make declaration and one row.
#include "client/cli/verb.h"

namespace schedcache::cli {

std::unique_ptr<Verb> MakeTopologyVerb();
std::unique_ptr<Verb> MakeDemoVerb();

namespace {

constexpr VerbEntry kVerbs[] = {
    {"topology", &MakeTopologyVerb},
    {"demo", &MakeDemoVerb},
};

}  // namespace

std::span<const VerbEntry> Verbs() { return kVerbs; }

}  // namespace schedcache::cli
