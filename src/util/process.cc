// See process.h. posix_spawnp with file actions (no fork of a large, threaded parent),
// a poll loop over the captured pipes, stdin and a pidfd of the child, and a deadline that
// kills the child's process group.
#include "kernodeck/util/process.h"
#include "kernodeck/util/unique_fd.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace kernodeck::util {

namespace {

using Fd = UniqueFd;

bool makePipe(Fd& r, Fd& w) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  r.fd = p[0];
  w.fd = p[1];
  return true;
}

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::vector<std::string> childEnvironment(const ProcessSpec& s) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    std::string name = kv.substr(0, kv.find('='));
    if (s.env.count(name) || std::find(s.unsetEnv.begin(), s.unsetEnv.end(), name) != s.unsetEnv.end()) continue;
    out.push_back(std::move(kv));
  }
  for (const auto& [k, v] : s.env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Writes to the child's stdin without the parent dying of SIGPIPE when the child has
// closed it: SIGPIPE is blocked in this thread for the write and a pending one consumed.
ssize_t writeNoSigpipe(int fd, const char* data, size_t n) {
  sigset_t pipeSet, old;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
  ssize_t w = ::write(fd, data, n);
  int saved = errno;
  if (w < 0 && saved == EPIPE) {
    struct timespec zero {};
    ::sigtimedwait(&pipeSet, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

// Reads what is available now from a non-blocking descriptor; false at end of file or on error.
bool drain(int fd, std::string& dst, size_t limit, bool& truncated) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      size_t room = dst.size() < limit ? limit - dst.size() : 0;
      dst.append(buf, std::min(room, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) > room) truncated = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

void decodeStatus(int st, ProcessResult& r) {
  if (WIFEXITED(st)) {
    r.exited = true;
    r.exitCode = WEXITSTATUS(st);
  } else if (WIFSIGNALED(st)) {
    r.signal = WTERMSIG(st);
  }
}

}  // namespace

std::string ProcessResult::describe() const {
  char buf[64];
  if (timedOut) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    return std::string("was stopped after ") + buf + " (time limit)";
  }
  if (exited) return "exited with status " + std::to_string(exitCode);
  if (signal) return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "ended in an unknown way";
}

std::string ProcessResult::lastLine() const {
  const std::string& s = err.find_first_not_of(" \t\r\n") != std::string::npos ? err : out;
  size_t end = s.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = s.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = s.substr(start, end + 1 - start);
  std::string safe;
  for (char c : line) safe.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  return safe.size() > 300 ? safe.substr(0, 300) + "..." : safe;
}

Error replaceProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error::Invalid("no program to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  return Error::Io("cannot run " + argv[0] + ": " + std::strerror(errno));
}

namespace {

// The pipes of a child: stdin fed from `stdinData`, stdout and stderr captured (each pair open
// only when used).
struct Pipes {
  Fd inR, inW, outR, outW, errR, errW;
};

// Starts spec.argv with posix_spawnp: its stdin, stdout and stderr routed as `spec` says, in
// its own process group, with default signal dispositions. The posix_spawnp result (0: started).
int spawnChild(const ProcessSpec& spec, Pipes& p, pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  if (!spec.stdinData.empty())
    ::posix_spawn_file_actions_adddup2(&fa, p.inR.fd, 0);
  else
    ::posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  auto route = [&](ProcessOutput how, int target, int captureFd) {
    if (how == ProcessOutput::Capture)
      ::posix_spawn_file_actions_adddup2(&fa, captureFd, target);
    else if (how == ProcessOutput::Discard)
      ::posix_spawn_file_actions_addopen(&fa, target, "/dev/null", O_WRONLY, 0);
    else if (target != 2)
      ::posix_spawn_file_actions_adddup2(&fa, 2, target);
  };
  route(spec.out, 1, p.outW.fd);
  route(spec.err, 2, p.errW.fd);
  if (!spec.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  // Own process group (killed as a whole at the deadline), no blocked signals, and the
  // dispositions a parent may have changed put back to their defaults.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2}) sigaddset(&defaults, s);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<std::string> argv = spec.argv, env = childEnvironment(spec);
  std::vector<char*> argvp = pointers(argv), envp = pointers(env);
  int rc = ::posix_spawnp(&pid, spec.argv[0].c_str(), &fa, &attr, argvp.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  return rc;
}

// Feeds the child's stdin and drains its output until it ends or the deadline passes (then
// its process group is killed); `status` is its wait status.
void superviseChild(const ProcessSpec& spec, pid_t pid, Pipes& p, std::chrono::steady_clock::time_point started,
                    ProcessResult& r, int& status) {
  Fd pidfd;
#ifdef SYS_pidfd_open
  pidfd.fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
  for (Fd* f : {&p.outR, &p.errR, &p.inW})
    if (f->fd >= 0) setNonBlocking(f->fd);
  size_t written = 0;
  auto deadline = started + std::chrono::milliseconds(spec.timeoutMs);
  bool reaped = false;
  while (!reaped) {
    int waitMs = -1;
    if (spec.timeoutMs) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        r.timedOut = true;
        break;
      }
      waitMs = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    if (pidfd.fd < 0) waitMs = waitMs < 0 ? 20 : std::min(waitMs, 20);  // no pidfd: look at the child every 20 ms
    struct pollfd fds[4];
    int n = 0, iOut = -1, iErr = -1, iIn = -1;
    if (p.outR.fd >= 0) iOut = n, fds[n++] = {p.outR.fd, POLLIN, 0};
    if (p.errR.fd >= 0) iErr = n, fds[n++] = {p.errR.fd, POLLIN, 0};
    if (p.inW.fd >= 0) iIn = n, fds[n++] = {p.inW.fd, POLLOUT, 0};
    if (pidfd.fd >= 0) fds[n++] = {pidfd.fd, POLLIN, 0};
    int pr = ::poll(fds, static_cast<nfds_t>(n), waitMs);
    if (pr < 0 && errno != EINTR) break;
    if (pr > 0) {
      if (iOut >= 0 && fds[iOut].revents && !drain(p.outR.fd, r.out, spec.maxOutput, r.truncated)) p.outR.reset();
      if (iErr >= 0 && fds[iErr].revents && !drain(p.errR.fd, r.err, spec.maxOutput, r.truncated)) p.errR.reset();
      if (iIn >= 0 && fds[iIn].revents) {
        ssize_t w = writeNoSigpipe(p.inW.fd, spec.stdinData.data() + written, spec.stdinData.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == spec.stdinData.size()) p.inW.reset();
      }
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) reaped = true;
  }
  if (!reaped) {
    // Past the deadline (or poll failed): the whole group, and the child should it have left it.
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

Result<ProcessResult> runProcess(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return Error::Invalid("no program to run");
  const std::string& prog = spec.argv[0];
  if (!spec.cwd.empty()) {
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Error::NotFound("cannot run " + prog + ": working directory " + spec.cwd + " does not exist");
  }
  Pipes p;
  bool feed = !spec.stdinData.empty();
  if ((feed && !makePipe(p.inR, p.inW)) || (spec.out == ProcessOutput::Capture && !makePipe(p.outR, p.outW)) ||
      (spec.err == ProcessOutput::Capture && !makePipe(p.errR, p.errW)))
    return Error::Io("cannot run " + prog + ": no pipe (" + std::strerror(errno) + ")");

  pid_t pid = -1;
  auto started = std::chrono::steady_clock::now();
  int rc = spawnChild(spec, p, pid);
  p.inR.reset();
  p.outW.reset();
  p.errW.reset();
  if (rc != 0) {
    if (rc == ENOENT) return Error::NotFound("cannot run " + prog + ": not found");
    return Error::Io("cannot run " + prog + ": " + std::strerror(rc));
  }

  ProcessResult r;
  int status = 0;
  superviseChild(spec, pid, p, started, r, status);
  // What the child wrote before it ended; a grandchild still holding the pipes is not waited for.
  if (p.outR.fd >= 0) drain(p.outR.fd, r.out, spec.maxOutput, r.truncated);
  if (p.errR.fd >= 0) drain(p.errR.fd, r.err, spec.maxOutput, r.truncated);
  decodeStatus(status, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

std::string quoteCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_@%+=:,./-", c) != nullptr;
    });
    bool control =
        std::any_of(a.begin(), a.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    if (plain) {
      out += a;
    } else if (!control) {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    } else {  // $'...' so that a newline or an escape sequence is shown, not sent to the terminal
      out += "$'";
      for (char c : a) {
        unsigned char u = static_cast<unsigned char>(c);
        char hex[8];
        if (c == '\n')
          out += "\\n";
        else if (c == '\t')
          out += "\\t";
        else if (c == '\'' || c == '\\')
          out += std::string("\\") + c;
        else if (u < 0x20 || u == 0x7f)
          std::snprintf(hex, sizeof hex, "\\x%02x", u), out += hex;
        else
          out += c;
      }
      out += '\'';
    }
  }
  return out;
}

Status removeTree(const std::string& path) {
  if (path.empty() || std::filesystem::path(path).lexically_normal() == "/")
    return Error::Unsafe("refusing to remove '" + path + "'");
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Error::Io("cannot remove " + path + ": " + ec.message());
  return {};
}

}  // namespace kernodeck::util
