#include "server/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// ScratchDir is a fresh directory under $TMPDIR, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "state-dir-test-XXXXXX")
            .string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

v1::CreateSessionRequest Definition(const std::string& name) {
  v1::CreateSessionRequest definition;
  definition.set_name(name);
  definition.mutable_topology()->set_xml(std::string("<topology/>\0\xff", 13));
  definition.mutable_topology()->set_xml_name("box.xml");
  definition.add_policies("full-scan");
  definition.add_policies("none");
  v1::TunableSetting* tunable = definition.add_tunables();
  tunable->set_name("aggr_tolerance");
  tunable->set_value("100");
  definition.set_trigger(v1::SCAN_TRIGGER_QUERY);
  return definition;
}

TEST(StateDir, OpenCreatesAMissingDirectoryWithMode0700) {
  ScratchDir scratch;
  const std::string path = scratch.path() + "/state";
  ASSERT_TRUE(StateDir::Open(path).ok());
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0700);
  // The writability probe leaves nothing behind.
  EXPECT_THAT(FilesIn(path), ::testing::IsEmpty());
}

TEST(StateDir, OpenRefusesAPathItCannotCreateOrWriteNamingIt) {
  ScratchDir scratch;
  const std::string missing_parent = scratch.path() + "/no/state";
  absl::StatusOr<std::unique_ptr<StateDir>> opened =
      StateDir::Open(missing_parent);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(opened.status().message(), HasSubstr(missing_parent));

  const std::string file = scratch.path() + "/plain";
  std::ofstream(file) << "x";
  opened = StateDir::Open(file);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(opened.status().message(),
              HasSubstr(file + ": the state directory is not a directory"));

  // /proc refuses new files even to root, whose access checks a mode
  // would not stop.
  opened = StateDir::Open("/proc");
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(opened.status().message(),
              HasSubstr("/proc: the state directory is not writable"));
}

TEST(StateDir, SavedDefinitionsLoadBackByteForByteAndRemoveDeletesThem) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(scratch.path());
  ASSERT_TRUE(dir.ok()) << dir.status();
  ASSERT_TRUE((*dir)->Save(Definition("b.two")).ok());
  ASSERT_TRUE((*dir)->Save(Definition("a-one")).ok());
  EXPECT_THAT(FilesIn(scratch.path()),
              ::testing::UnorderedElementsAre("a-one.session", "b.two.session"));
  struct stat info;
  ASSERT_EQ(::stat((scratch.path() + "/a-one.session").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);

  const std::vector<StateDir::StoredDefinition> stored = (*dir)->Load();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].file, scratch.path() + "/a-one.session");
  ASSERT_TRUE(stored[0].definition.ok()) << stored[0].definition.status();
  EXPECT_EQ(stored[0].definition->SerializeAsString(),
            Definition("a-one").SerializeAsString());
  ASSERT_TRUE(stored[1].definition.ok()) << stored[1].definition.status();
  EXPECT_EQ(stored[1].definition->name(), "b.two");

  ASSERT_TRUE((*dir)->Remove("a-one").ok());
  EXPECT_TRUE((*dir)->Remove("a-one").ok()) << "a second Remove is OK";
  EXPECT_THAT(FilesIn(scratch.path()),
              ::testing::ElementsAre("b.two.session"));
}

TEST(StateDir, SaveReplacesTheOlderDefinitionOfAName) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(scratch.path());
  ASSERT_TRUE(dir.ok());
  v1::CreateSessionRequest newer = Definition("s");
  newer.clear_tunables();
  ASSERT_TRUE((*dir)->Save(Definition("s")).ok());
  ASSERT_TRUE((*dir)->Save(newer).ok());
  const std::vector<StateDir::StoredDefinition> stored = (*dir)->Load();
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_TRUE(stored[0].definition.ok());
  EXPECT_EQ(stored[0].definition->tunables_size(), 0);
}

TEST(StateDir, AFailedSaveLeavesNoFileAndNamesTheFile) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(scratch.path());
  ASSERT_TRUE(dir.ok());
  // A non-empty directory where the file goes: the rename fails for root
  // too, after the temporary file was written and synced.
  const std::string target = scratch.path() + "/s.session";
  ASSERT_EQ(::mkdir(target.c_str(), 0700), 0);
  std::ofstream(target + "/keep") << "x";
  const absl::Status saved = (*dir)->Save(Definition("s"));
  EXPECT_EQ(saved.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(saved.message(), HasSubstr(target + ": rename from " + target +
                                         ".tmp."));
  EXPECT_THAT(FilesIn(scratch.path()), ::testing::ElementsAre("s.session"));
}

TEST(StateDir, ASaveIntoAReadOnlyDirectoryFailsAndLeavesNothing) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root writes into a mode 0500 directory; the rename "
                    "failure above covers a failed save for root";
  }
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(scratch.path());
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(::chmod(scratch.path().c_str(), 0500), 0);
  const absl::Status saved = (*dir)->Save(Definition("s"));
  EXPECT_EQ(saved.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(saved.message(),
              HasSubstr(scratch.path() + "/s.session: creating a temporary "
                                         "file failed: Permission denied"));
  EXPECT_THAT(FilesIn(scratch.path()), ::testing::IsEmpty());
}

TEST(StateDir, LoadReportsEachBadFileAndStillReadsTheGoodOnes) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(scratch.path());
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE((*dir)->Save(Definition("good")).ok());
  // Field 1 (name) as a length-delimited field claiming 100 bytes of 2.
  std::ofstream(scratch.path() + "/corrupt.session") << "\x0a\x64zz";
  v1::CreateSessionRequest other = Definition("other");
  std::ofstream(scratch.path() + "/renamed.session") << other.SerializeAsString();
  std::ofstream(scratch.path() + "/x.session.tmp.AbC123") << "half";
  std::ofstream(scratch.path() + "/README") << "not a session";

  const std::vector<StateDir::StoredDefinition> stored = (*dir)->Load();
  ASSERT_EQ(stored.size(), 4u);  // README is not a session file
  EXPECT_EQ(stored[0].file, scratch.path() + "/corrupt.session");
  EXPECT_EQ(stored[0].definition.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(stored[0].definition.status().message(),
              HasSubstr(scratch.path() +
                        "/corrupt.session: not a "
                        "schedcache.v1.CreateSessionRequest (4 bytes)"));
  EXPECT_TRUE(stored[1].definition.ok());
  EXPECT_EQ(stored[1].definition->name(), "good");
  EXPECT_THAT(stored[2].definition.status().message(),
              HasSubstr("renamed.session: holds session \"other\", not the "
                        "\"renamed\" its file name says"));
  EXPECT_THAT(stored[3].definition.status().message(),
              HasSubstr("x.session.tmp.AbC123: an interrupted write; removed"));
  EXPECT_THAT(FilesIn(scratch.path()),
              ::testing::UnorderedElementsAre("good.session", "corrupt.session",
                                              "renamed.session", "README"));
}

}  // namespace
}  // namespace schedcache
