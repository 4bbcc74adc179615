// N-API binding of an exclusive advisory lock on an open file (flock), which gives a run directory
// one writer (src/fs/run-lock.ts). The lock belongs to the open file, so the OS drops it when the
// file is closed or the process ends in any way, kill -9 included. Same rules as addon.cc: a bad
// argument or a failed system call throws a JavaScript error; nothing here exits or aborts.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "napi-args.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/file.h>
#define MASO_HAVE_FLOCK 1
#endif

using namespace maso;

namespace {

// lockFile(fd): true when this call took the exclusive lock on the open file `fd` (or this open file
// already held it), false when another open file holds it. Never waits.
Napi::Value LockFile(const Napi::CallbackInfo& info) {
  Call c{info, "lockFile"};
  c.arity(1);
  const int fd = c.dim(0, "fd");
  Napi::Env env = info.Env();
#ifdef MASO_HAVE_FLOCK
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return Napi::Boolean::New(env, true);
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
    const int err = errno;
    Napi::Error e = Napi::Error::New(env, std::string("maso native lockFile(): flock failed: ") + std::strerror(err) +
                                              " [" + __FILE__ + "]");
    e.Value().Set("errno", Napi::Number::New(env, err));
    throw e;
  }
#else
  (void)fd;
  throw Napi::Error::New(env, std::string("maso native lockFile(): file locks need POSIX flock, which this platform lacks [") +
                                  __FILE__ + "]");
#endif
}

}  // namespace

void RegisterFileLockBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("lockFile", Napi::Function::New(env, LockFile, "lockFile"));
}
