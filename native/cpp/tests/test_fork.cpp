// A process that forks after it started logging: the child never writes into
// the parent's files. Without {pid} in the path it logs nothing, with one
// warning; with {pid} it writes a run of its own at its own path.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orchlog/logger.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {

const float kValue = 1.5f;

bool log_one(const char* checkpoint, int token) {
  return orchlog::log(checkpoint, {&kValue, orchlog::DType::f32, {1}}, {token});
}

// Forks; the child sends its stderr to `err`, logs twice and exits with 0 when
// neither call wrote a record and logging is off (with {pid}: when both did).
pid_t fork_child(const std::string& err, bool expect_written) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 2);
  const bool a = log_one("child", 1), b = log_one("child", 2);
  const bool ok = expect_written ? (a && b && orchlog::status().enabled && orchlog::status().records == 2)
                                 : (!a && !b && !orchlog::status().enabled);
  orchlog::close();
  ::_exit(ok ? 0 : 1);
}

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(Fork, AChildWritesNothingIntoItsParentsFileAndSaysSoOnce) {
  t::ScratchDir dir;
  const std::string path = dir.file("run.jsonl");
  ASSERT_TRUE(orchlog::configure(t::options_for(path)));
  ASSERT_TRUE(log_one("parent", 0));
  const pid_t child = fork_child(dir.file("child.err"), false);
  ASSERT_EQ(exit_code(child), 0);
  EXPECT_TRUE(log_one("parent", 3));
  orchlog::close();

  const auto lines = t::lines_of(t::read_file(path));
  ASSERT_EQ(lines.size(), 3u);  // the header and the parent's two records
  EXPECT_NE(lines[1].find("\"checkpoint\":\"parent\""), std::string::npos);
  EXPECT_NE(lines[2].find("\"seq\":1,"), std::string::npos) << lines[2];
  EXPECT_EQ(t::read_file(dir.file("child.err")),
            "orchlog: warning: this process (pid " + std::to_string(child) + ") was forked from pid " +
                std::to_string(::getpid()) + ", which writes " + path +
                "; it writes nothing there (put {pid} in ORCH_LOG_FILE to give each process its own file); "
                "logging is off\n");
}

TEST(Fork, WithPidInThePathAChildWritesARunOfItsOwn) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run-{pid}.jsonl"))));
  ASSERT_TRUE(log_one("parent", 0));
  const pid_t child = fork_child(dir.file("child.err"), true);
  ASSERT_EQ(exit_code(child), 0);
  EXPECT_TRUE(log_one("parent", 3));
  orchlog::close();

  const auto ours = t::lines_of(t::read_file(dir.file("run-" + std::to_string(::getpid()) + ".jsonl")));
  const auto theirs = t::lines_of(t::read_file(dir.file("run-" + std::to_string(child) + ".jsonl")));
  ASSERT_EQ(ours.size(), 3u);
  ASSERT_EQ(theirs.size(), 3u);  // a header of its own, then its two records from seq 0
  EXPECT_EQ(theirs[0].rfind("{\"orchlog\":", 0), 0u);
  EXPECT_NE(theirs[1].find("\"checkpoint\":\"child\""), std::string::npos);
  EXPECT_NE(theirs[1].find("\"seq\":0,"), std::string::npos) << theirs[1];
  EXPECT_EQ(t::read_file(dir.file("child.err")), "");
}
