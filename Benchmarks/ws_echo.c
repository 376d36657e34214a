/* ws_echo: the websocket scenario's upstream (bench_websocket.py compiles it with gcc at
 * run time). A WebSocket echo server that costs little per byte, so that it is not what
 * bounds the proxy in front of it.
 *
 * One thread, epoll (level-triggered), non-blocking sockets. Each connection:
 *   the opening handshake (RFC 6455 §4.2): a GET with `Upgrade: websocket`, a
 *   Sec-WebSocket-Key and, with --token-file, `Authorization: Bearer <the file's text>`
 *   exactly, else 401 and close (so every handshake proves the proxy attached the
 *   credential); answered 101 with Sec-WebSocket-Accept;
 *   then frames: a client's frame must be masked (§5.1); each data frame is echoed as it
 *   comes, unmasked, with the same opcode, FIN bit and length (the payload streamed, never
 *   gathered: a 64 KiB message costs one read and one write of its bytes here); a ping is
 *   answered with a pong, a close with a close (then the connection ends);
 *   a text message `stream N` (one frame) starts N bytes of binary frames of 64 KiB (the
 *   last shorter), whose payload is `pattern` (byte i of a frame = i % 251), written as
 *   fast as the peer takes them, then a text frame `done`.
 * Reading stops while more than 1 MiB waits for the peer, and goes on below 256 KiB.
 *
 * Usage: ws_echo --port P [--token-file F]; prints `listening` once it accepts.
 * Build: gcc -O2 -o ws_echo ws_echo.c -lcrypto (ws_proto.h, beside it, has the framing it shares
 * with ws_load.c) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ws_proto.h"

#define READ_CHUNK (256 * 1024)
#define PAUSE_ABOVE (1024 * 1024)
#define RESUME_BELOW (256 * 1024)
#define MAX_HEAD 8192

enum state { HEAD, OPEN, CLOSING };

struct conn {
    int fd;
    enum state state;
    char head[MAX_HEAD];
    size_t head_len;
    /* frame parsing */
    struct ws_header hdr; /* the current frame's */
    uint64_t remaining; /* payload bytes of the current frame still to come */
    uint64_t key_phase; /* payload offset within the frame, for the mask */
    int gather;         /* gathering a control frame or a short text frame's payload */
    uint8_t small[128];
    size_t small_len;
    /* output */
    uint8_t *out;
    size_t out_start, out_end, out_cap;
    uint64_t stream_left; /* bytes of `stream` still to send */
    size_t frame_pos;     /* bytes of the current stream frame (header + payload) sent */
    size_t frame_payload; /* its payload length */
    uint8_t frame_hdr[10];
    size_t frame_hdr_len;
    int done_owed;
    uint32_t events;
};

static int ep;
static char token_header[1024];
static uint8_t pattern[STREAM_FRAME];
static uint8_t *rbuf;

static size_t pending(struct conn *c) { return c->out_end - c->out_start; }

static void out_reserve(struct conn *c, size_t n) {
    if (c->out_start == c->out_end) c->out_start = c->out_end = 0;
    if (c->out_cap - c->out_end >= n) return;
    if (c->out_start > 0) {
        memmove(c->out, c->out + c->out_start, pending(c));
        c->out_end -= c->out_start;
        c->out_start = 0;
    }
    if (c->out_cap - c->out_end >= n) return;
    size_t cap = c->out_cap ? c->out_cap : 65536;
    while (cap - c->out_end < n) cap *= 2;
    c->out = realloc(c->out, cap);
    if (!c->out) abort();
    c->out_cap = cap;
}

static void out_append(struct conn *c, const void *p, size_t n) {
    out_reserve(c, n);
    memcpy(c->out + c->out_end, p, n);
    c->out_end += n;
}

static void conn_close(struct conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->out);
    free(c);
}

static void set_events(struct conn *c, uint32_t events) {
    if (events == c->events) return;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->events = events;
}

static void update_events(struct conn *c) {
    uint32_t e = 0;
    size_t p = pending(c);
    int reading = c->state != CLOSING && !c->stream_left &&
                  (p < RESUME_BELOW || ((c->events & EPOLLIN) && p < PAUSE_ABOVE));
    if (reading) e |= EPOLLIN;
    if (p || c->stream_left || c->done_owed) e |= EPOLLOUT;
    set_events(c, e);
}

/* 0: fine; -1: the connection is to be closed. */
static int flush(struct conn *c) {
    while (pending(c)) {
        ssize_t w = send(c->fd, c->out + c->out_start, pending(c), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return 0;
        if (w <= 0) return -1;
        c->out_start += (size_t)w;
    }
    while (c->stream_left) {
        if (c->frame_pos == 0 && c->frame_payload == 0) {
            c->frame_payload = c->stream_left < STREAM_FRAME ? (size_t)c->stream_left : STREAM_FRAME;
            c->frame_hdr_len = ws_frame_header(c->frame_hdr, 1, 2, WS_UNMASKED, c->frame_payload);
        }
        struct iovec iov[2];
        int n = 0;
        if (c->frame_pos < c->frame_hdr_len)
            iov[n++] = (struct iovec){c->frame_hdr + c->frame_pos, c->frame_hdr_len - c->frame_pos};
        size_t done_payload = c->frame_pos > c->frame_hdr_len ? c->frame_pos - c->frame_hdr_len : 0;
        iov[n++] = (struct iovec){pattern + done_payload, c->frame_payload - done_payload};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return 0;
        if (w <= 0) return -1;
        c->frame_pos += (size_t)w;
        if (c->frame_pos == c->frame_hdr_len + c->frame_payload) {
            c->stream_left -= c->frame_payload;
            c->frame_pos = c->frame_payload = 0;
            if (!c->stream_left) c->done_owed = 1;
        }
    }
    if (c->done_owed) {
        uint8_t done[6] = {0x81, 4, 'd', 'o', 'n', 'e'};
        out_append(c, done, sizeof done);
        c->done_owed = 0;
        return flush(c);
    }
    if (c->state == CLOSING) return -1;
    return 0;
}

static int handshake(struct conn *c) {
    c->head[c->head_len] = 0;
    char *key = NULL, *auth = NULL;
    int upgrade = 0;
    for (char *line = strstr(c->head, "\r\n"); line && line[2] && line[2] != '\r'; line = strstr(line + 2, "\r\n")) {
        char *name = line + 2, *colon = strchr(name, ':'), *end = strstr(name, "\r\n");
        if (!colon || (end && colon > end)) continue;
        char *value = colon + 1;
        while (*value == ' ') value++;
        size_t nlen = (size_t)(colon - name), vlen = end ? (size_t)(end - value) : strlen(value);
        if (nlen == 17 && !strncasecmp(name, "Sec-WebSocket-Key", 17)) key = strndup(value, vlen);
        else if (nlen == 13 && !strncasecmp(name, "Authorization", 13)) auth = strndup(value, vlen);
        else if (nlen == 7 && !strncasecmp(name, "Upgrade", 7) && vlen == 9 && !strncasecmp(value, "websocket", 9))
            upgrade = 1;
    }
    char answer[512];
    int ok = key && upgrade && (!token_header[0] || (auth && !strcmp(auth, token_header)));
    if (!ok) {
        const char *why = !upgrade || !key ? "400 Bad Request" : "401 Unauthorized";
        int n = snprintf(answer, sizeof answer, "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", why);
        out_append(c, answer, (size_t)n);
        c->state = CLOSING;
    } else {
        char accept[64];
        ws_accept(key, accept);
        int n = snprintf(answer, sizeof answer,
                         "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
        out_append(c, answer, (size_t)n);
        c->state = OPEN;
    }
    free(key);
    free(auth);
    return 0;
}

/* A whole small frame's payload (control, or a short text) is in c->small. */
static int small_frame_done(struct conn *c) {
    uint8_t h[14];
    if (c->hdr.opcode == 8) { /* close: answer with the same code, then end */
        size_t hl = ws_frame_header(h, 1, 8, WS_UNMASKED, c->small_len >= 2 ? 2 : 0);
        out_append(c, h, hl);
        out_append(c, c->small, c->small_len >= 2 ? 2 : 0);
        c->state = CLOSING;
        return 0;
    }
    if (c->hdr.opcode == 9) { /* ping -> pong */
        size_t hl = ws_frame_header(h, 1, 10, WS_UNMASKED, c->small_len);
        out_append(c, h, hl);
        out_append(c, c->small, c->small_len);
        return 0;
    }
    if (c->hdr.opcode == 10) return 0;
    if (c->hdr.opcode == 1 && c->small_len > 7 && !memcmp(c->small, "stream ", 7)) {
        c->small[c->small_len] = 0;
        c->stream_left = strtoull((char *)c->small + 7, NULL, 10);
        c->frame_pos = c->frame_payload = 0;
        if (!c->stream_left) c->done_owed = 1;
        return 0;
    }
    size_t hl = ws_frame_header(h, c->hdr.fin, c->hdr.opcode, WS_UNMASKED, c->small_len);
    out_append(c, h, hl);
    out_append(c, c->small, c->small_len);
    return 0;
}

/* Frames from bytes the client sent; -1 for a protocol error. */
static int consume_frames(struct conn *c, const uint8_t *p, size_t n) {
    while (n > 0 && c->state == OPEN) {
        if (c->remaining == 0 && !c->gather) {
            int whole = ws_header_take(&c->hdr, &p, &n, WS_MASKED); /* RFC 6455 §5.1: a client masks */
            if (whole <= 0) return whole;
            uint64_t len = c->hdr.payload_len;
            c->key_phase = 0;
            c->remaining = len;
            c->small_len = 0;
            c->gather = (c->hdr.opcode >= 8 || (c->hdr.opcode == 1 && len <= 64));
            if (c->hdr.opcode >= 8 && len > 125) return -1;
            if (!c->gather) {
                uint8_t h[10];
                size_t hl = ws_frame_header(h, c->hdr.fin, c->hdr.opcode, WS_UNMASKED, len);
                out_append(c, h, hl);
            }
            if (len == 0) {
                if (c->gather) {
                    c->gather = 0;
                    if (small_frame_done(c) < 0) return -1;
                }
                continue;
            }
        }
        size_t take = n < c->remaining ? n : (size_t)c->remaining;
        if (c->gather) {
            ws_mask(c->small + c->small_len, p, take, c->hdr.key, c->key_phase);
            c->small_len += take;
        } else {
            out_reserve(c, take);
            ws_mask(c->out + c->out_end, p, take, c->hdr.key, c->key_phase);
            c->out_end += take;
        }
        c->key_phase += take;
        c->remaining -= take;
        p += take;
        n -= take;
        if (c->remaining == 0 && c->gather) {
            c->gather = 0;
            if (small_frame_done(c) < 0) return -1;
        }
    }
    return 0;
}

static void on_readable(struct conn *c) {
    if (c->state == HEAD) {
        ssize_t r = recv(c->fd, c->head + c->head_len, MAX_HEAD - 1 - c->head_len, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (r <= 0) { conn_close(c); return; }
        size_t scan_from = c->head_len > 3 ? c->head_len - 3 : 0;
        c->head_len += (size_t)r;
        c->head[c->head_len] = 0;
        char *end = strstr(c->head + scan_from, "\r\n\r\n");
        if (!end) {
            if (c->head_len >= MAX_HEAD - 1) { conn_close(c); return; }
            return;
        }
        size_t head_size = (size_t)(end + 4 - c->head);
        size_t extra = c->head_len - head_size;
        uint8_t early[MAX_HEAD];
        memcpy(early, end + 4, extra);
        handshake(c);
        if (extra && consume_frames(c, early, extra) < 0) { conn_close(c); return; }
    } else {
        for (int round = 0; round < 4 && pending(c) < PAUSE_ABOVE; round++) {
            ssize_t r = recv(c->fd, rbuf, READ_CHUNK, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && errno == EAGAIN) break;
            if (r <= 0) { conn_close(c); return; }
            if (consume_frames(c, rbuf, (size_t)r) < 0) { conn_close(c); return; }
            if ((size_t)r < READ_CHUNK || c->state != OPEN) break;
        }
    }
    if (flush(c) < 0) { conn_close(c); return; }
    update_events(c);
}

int main(int argc, char **argv) {
    int port = 0;
    const char *token_file = NULL;
    static struct option longopts[] = {{"port", required_argument, NULL, 'p'},
                                       {"token-file", required_argument, NULL, 't'},
                                       {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (ch == 'p') port = atoi(optarg);
        else if (ch == 't') token_file = optarg;
        else return 2;
    }
    if (token_file) {
        char token[900] = {0};
        if (read_token(token_file, token, sizeof token) < 0) {
            fprintf(stderr, "ws_echo: cannot read %s\n", token_file);
            return 1;
        }
        snprintf(token_header, sizeof token_header, "Bearer %s", token);
    }
    signal(SIGPIPE, SIG_IGN);
    ws_stream_pattern(pattern);
    rbuf = malloc(READ_CHUNK);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 4096) < 0) {
        perror("ws_echo: bind/listen");
        return 1;
    }
    ep = epoll_create1(0);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
    printf("listening\n");
    fflush(stdout);
    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return 1;
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (!c) {
                for (;;) {
                    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
                    if (fd < 0) break;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    c = calloc(1, sizeof *c);
                    c->fd = fd;
                    c->events = EPOLLIN;
                    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            uint32_t e = events[i].events;
            if (e & EPOLLOUT) {
                if (flush(c) < 0) {
                    conn_close(c);
                    continue;
                }
                update_events(c);
            }
            if (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                if (c->events & EPOLLIN) on_readable(c);
                else if (e & (EPOLLHUP | EPOLLERR)) conn_close(c);
            }
        }
    }
}
