#ifndef LATCHKEY_CLINUX_H
#define LATCHKEY_CLINUX_H

// Linux headers that `import Glibc` does not expose (epoll, eventfd, signalfd, glibc's
// mallopt), and
// wrappers for calls that need _GNU_SOURCE, which must not be defined in this public
// header: doing so changes fd_set and breaks the SwiftGlibc module.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <malloc.h>

/// accept4(2): Swift cannot see it without _GNU_SOURCE.
int lk_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// The calling thread's errno: Swift 6 cannot read the thread-local `errno` macro portably.
int lk_errno(void);

/// pthread_sigmask(SIG_BLOCK) for the given signals: sigset_t's helpers are macros on some
/// libcs. Called first thing in main so that every later thread inherits the mask and
/// signalfd alone receives them.
int lk_block_signals(const int *signals, int count);

#endif
