/* ws_load: the websocket scenario's load generator (bench_websocket.py compiles it with gcc
 * at run time). wrk speaks no WebSocket; this opens upgraded connections through a proxy
 * (or straight to the upstream, Benchmarks/ws_echo.c) and echoes messages on them.
 *
 * One thread, epoll, non-blocking sockets, a minimal RFC 6455 client: the opening
 * handshake (GET with Upgrade: websocket, Connection: Upgrade, a random Sec-WebSocket-Key;
 * the answer must be 101 with the matching Sec-WebSocket-Accept), masked binary frames
 * out (§5.3, a random key per frame), unmasked frames in.
 *
 * Echo mode (the default). Each of --connections connections is opened (at most
 * --setup-concurrency handshakes at a time), then sends --warmup messages; once every
 * connection has, it prints `ready` and waits for a line on stdin (`go`), so that the caller
 * samples the proxy's CPU time (or zeroes callgrind's counters, or reads its RSS) with no
 * handshake inside the measured span. Then each connection sends messages of --size bytes,
 * at most --inflight of them unanswered at a time (1: sequential round trips), for
 * --duration seconds or exactly --messages per connection. Every echoed byte is compared
 * with what was sent (the payload differs from message to message). A round trip is timed
 * from the message's first byte handed to the socket to its echo's last byte read. Prints
 *   LKBENCH messages=N bytes=N duration_us=N p50_ns=N p99_ns=N errors=N open=N
 * (bytes: echoed payload read back) and keeps the connections open until stdin ends, so
 * that the caller reads its counters before any connection closes.
 *
 * Stream mode (--stream BYTES): one connection, set up as above; after `go` it sends the
 * text message `stream BYTES`, which ws_echo answers with that many bytes of binary frames,
 * and reads them at --read-rate bytes/s (0: as fast as it can), checking every payload byte
 * against ws_echo's pattern, until ws_echo's `done`. Prints the same LKBENCH line
 * (messages: frames read).
 *
 * A connection that closes, fails or reads a wrong byte counts an error (the first one's
 * reason on stderr) and is not opened again; during the setup, it ends the run with its
 * reason on stderr and no `ready`.
 *
 * Build: gcc -O2 -o ws_load ws_load.c -lcrypto (ws_proto.h, beside it, has the framing it shares
 * with ws_echo.c) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ws_proto.h"

#define READ_CHUNK (256 * 1024)

static struct {
    int port;
    const char *path;
    const char *bearer_file;
    int connections;
    int setup_concurrency;
    size_t size;
    int inflight;
    double duration;
    long messages; /* per connection, instead of a duration */
    long warmup;   /* messages per connection before `ready` */
    uint64_t stream;
    double read_rate;
} opt = {.path = "/", .connections = 1, .setup_concurrency = 64, .size = 32, .inflight = 1, .duration = 10,
         .warmup = 10};

enum state { CONNECTING, HANDSHAKE, OPEN, DEAD };

struct conn {
    int index;
    int fd;
    enum state state;
    char accept[64];
    char head[4096];
    size_t head_len;
    uint8_t *out;
    size_t out_start, out_end, out_cap;
    uint32_t events;
    long sent, done;  /* messages queued and echoed in this phase */
    long quota;       /* messages to send in this phase; -1: until told to stop */
    int finished;     /* counted in finished_conns */
    uint64_t seq;     /* messages sent over the connection's life (picks the payload) */
    double *sent_at;  /* ring of --inflight send times */
    /* the frame being read */
    struct ws_header hdr;
    uint64_t remaining;
    uint64_t msg_off; /* payload bytes of the current message read so far */
};

static int ep;
static struct conn *conns;
static uint8_t *payloads; /* --size + 256 random bytes; message k is payloads[k*7 % 256 ...] */
static uint8_t *rbuf;
static char request_text[2048];
static uint32_t rng = 2463534242u;
static char bearer[1024];

static int phase_measured, stopping;
static double deadline;
static long errors, finished_conns, ready_conns, opening, next_to_open;
static long measured_messages;
static uint64_t measured_bytes;
static uint32_t *lat;
static size_t nlat, caplat;
static char first_error[512];

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t xorshift(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static void record_error(struct conn *c, const char *fmt, ...) {
    if (!first_error[0]) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(first_error, sizeof first_error, "connection %d: ", c->index);
        vsnprintf(first_error + n, sizeof first_error - (size_t)n, fmt, ap);
        va_end(ap);
    }
}

static void fail(struct conn *c, const char *fmt, ...) {
    if (c->state == DEAD) return;
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    record_error(c, "%s", why);
    if (!phase_measured) {
        fprintf(stderr, "ws_load: setup failed: %s\n", first_error);
        exit(1);
    }
    errors++;
    if (!c->finished) finished_conns++;
    c->finished = 1;
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->state = DEAD;
}

static size_t pending(struct conn *c) { return c->out_end - c->out_start; }

static void set_events(struct conn *c, uint32_t events) {
    if (events == c->events || c->state == DEAD) return;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->events = events;
}

static void flush(struct conn *c) {
    while (pending(c)) {
        ssize_t w = send(c->fd, c->out + c->out_start, pending(c), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) break;
        if (w <= 0) return fail(c, "send: %s", strerror(errno));
        c->out_start += (size_t)w;
    }
    if (!pending(c)) c->out_start = c->out_end = 0;
    set_events(c, EPOLLIN | (pending(c) ? EPOLLOUT : 0));
}

static void append_frame(struct conn *c, int opcode, const uint8_t *payload, size_t len) {
    size_t need = len + 14;
    if (c->out_cap - c->out_end < need) {
        if (c->out_start) {
            memmove(c->out, c->out + c->out_start, pending(c));
            c->out_end -= c->out_start;
            c->out_start = 0;
        }
        if (c->out_cap - c->out_end < need) {
            c->out_cap = c->out_end + need;
            c->out = realloc(c->out, c->out_cap);
            if (!c->out) abort();
        }
    }
    uint8_t *h = c->out + c->out_end;
    size_t hl = ws_frame_header(h, 1, opcode, WS_MASKED, len);
    uint32_t key32 = xorshift();
    memcpy(h + hl, &key32, 4);
    ws_mask(h + hl + 4, payload, len, h + hl, 0);
    c->out_end += hl + 4 + len;
}

static const uint8_t *payload_of(uint64_t seq) { return payloads + (seq * 7) % 256; }

static void send_messages(struct conn *c) {
    int queued = 0;
    while (c->state == OPEN && c->sent - c->done < opt.inflight && (c->quota < 0 || c->sent < c->quota) && !stopping) {
        c->sent_at[(c->seq) % (uint64_t)opt.inflight] = now_seconds();
        append_frame(c, 2, payload_of(c->seq), opt.size);
        c->seq++;
        c->sent++;
        queued = 1;
    }
    if (queued) flush(c);
}

static void open_next(void);

/* The connection has sent and had echoed every message of this phase. */
static void phase_finished(struct conn *c) {
    if (!phase_measured) {
        ready_conns++;
        opening--;
        open_next();
    } else if (!c->finished) {
        c->finished = 1;
        finished_conns++;
    }
}

static void message_echoed(struct conn *c) {
    uint64_t seq = c->seq - (uint64_t)(c->sent - c->done);
    double t = now_seconds();
    if (phase_measured && (opt.messages > 0 || t <= deadline)) {
        double rtt = t - c->sent_at[seq % (uint64_t)opt.inflight];
        if (nlat == caplat) {
            caplat = caplat ? caplat * 2 : 65536;
            lat = realloc(lat, caplat * sizeof *lat);
        }
        double ns = rtt * 1e9;
        lat[nlat++] = ns > 4e9 ? 4000000000u : (uint32_t)ns;
        measured_messages++;
        measured_bytes += opt.size;
    }
    c->done++;
    c->msg_off = 0;
    if (c->done == c->sent && (stopping || (c->quota >= 0 && c->done >= c->quota))) phase_finished(c);
    else send_messages(c);
}

/* Frames the server sent: echoes of this connection's messages. */
static void consume_frames(struct conn *c, const uint8_t *p, size_t n) {
    while (n > 0 && c->state == OPEN) {
        if (c->remaining == 0) {
            int whole = ws_header_take(&c->hdr, &p, &n, WS_UNMASKED);
            if (whole < 0) return fail(c, "a masked frame from the server");
            if (!whole) return;
            uint64_t len = c->hdr.payload_len;
            c->remaining = len;
            if (c->hdr.opcode == 8) return fail(c, "the server sent a close frame");
            if (c->hdr.opcode != 2 && c->hdr.opcode != 0)
                return fail(c, "an unexpected frame (opcode %d)", c->hdr.opcode);
            if (c->sent == c->done) return fail(c, "a frame with no message unanswered");
            if (c->msg_off + len > opt.size) return fail(c, "an echo longer than its message");
            if (len == 0 && c->hdr.fin) {
                if (c->msg_off != opt.size) return fail(c, "an echo shorter than its message");
                message_echoed(c);
                continue;
            }
        }
        size_t take = n < c->remaining ? n : (size_t)c->remaining;
        uint64_t seq = c->seq - (uint64_t)(c->sent - c->done);
        if (memcmp(p, payload_of(seq) + c->msg_off, take) != 0)
            return fail(c, "wrong bytes in the echo of message %llu at offset %llu", (unsigned long long)seq,
                        (unsigned long long)c->msg_off);
        c->msg_off += take;
        c->remaining -= take;
        p += take;
        n -= take;
        if (c->remaining == 0 && c->hdr.fin) {
            if (c->msg_off != opt.size) return fail(c, "an echo shorter than its message");
            message_echoed(c);
        }
    }
}

static void start_handshake(struct conn *c) {
    uint8_t raw[16];
    RAND_bytes(raw, sizeof raw);
    char key[32];
    EVP_EncodeBlock((uint8_t *)key, raw, sizeof raw);
    ws_accept(key, c->accept);
    char text[3072];
    int n = snprintf(text, sizeof text, request_text, key);
    c->out = realloc(c->out, (size_t)n > c->out_cap ? (size_t)n : c->out_cap);
    if ((size_t)n > c->out_cap) c->out_cap = (size_t)n;
    memcpy(c->out, text, (size_t)n);
    c->out_start = 0;
    c->out_end = (size_t)n;
    c->state = HANDSHAKE;
    flush(c);
}

static void read_head(struct conn *c) {
    ssize_t r = recv(c->fd, c->head + c->head_len, sizeof c->head - 1 - c->head_len, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (r == 0) return fail(c, "the handshake's answer: the connection closed");
    if (r < 0) return fail(c, "the handshake's answer: %s", strerror(errno));
    c->head_len += (size_t)r;
    c->head[c->head_len] = 0;
    char *end = strstr(c->head, "\r\n\r\n");
    if (!end) {
        if (c->head_len >= sizeof c->head - 1) return fail(c, "the handshake's answer is too long");
        return;
    }
    *end = 0;
    if (strncmp(c->head, "HTTP/1.1 101", 12) != 0) {
        char *eol = strstr(c->head, "\r\n");
        if (eol) *eol = 0;
        return fail(c, "the handshake was answered `%s`", c->head);
    }
    int accepted = 0;
    for (char *line = strstr(c->head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (!strncasecmp(line + 2, "Sec-WebSocket-Accept:", 21)) {
            char *v = line + 23;
            while (*v == ' ') v++;
            accepted = !strncmp(v, c->accept, strlen(c->accept));
        }
    }
    if (!accepted) return fail(c, "no matching Sec-WebSocket-Accept in the 101");
    size_t head_size = (size_t)(end + 4 - c->head);
    size_t extra = c->head_len - head_size;
    c->state = OPEN;
    c->sent = c->done = 0;
    c->quota = opt.warmup;
    if (extra) consume_frames(c, (uint8_t *)c->head + head_size, extra);
    if (c->state != OPEN) return;
    if (c->quota == 0) return phase_finished(c);
    send_messages(c);
}

static void open_conn(struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    c->state = CONNECTING;
    c->events = EPOLLOUT;
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS)
        return fail(c, "connect: %s", strerror(errno));
}

static void open_next(void) {
    while (opening < opt.setup_concurrency && next_to_open < opt.connections) {
        opening++;
        open_conn(&conns[next_to_open++]);
    }
}

static void on_event(struct conn *c, uint32_t e) {
    if (c->state == CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) return fail(c, "connect: %s", strerror(err));
        return start_handshake(c);
    }
    if (e & EPOLLOUT) flush(c);
    if (c->state == DEAD || !(e & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    if (c->state == HANDSHAKE) return read_head(c);
    for (;;) {
        ssize_t r = recv(c->fd, rbuf, READ_CHUNK, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return;
        if (r == 0) return fail(c, "the connection closed");
        if (r < 0) return fail(c, "recv: %s", strerror(errno));
        consume_frames(c, rbuf, (size_t)r);
        if (c->state != OPEN || r < READ_CHUNK) return;
    }
}

static void run_loop(int (*done)(void)) {
    struct epoll_event events[256];
    while (!done()) {
        int timeout = -1;
        if (phase_measured && opt.messages == 0) {
            double t = now_seconds();
            if (!stopping && t >= deadline) {
                stopping = 1; /* no new message; the unanswered ones are read, uncounted */
                for (int i = 0; i < opt.connections; i++)
                    if (conns[i].state == OPEN && conns[i].done == conns[i].sent) phase_finished(&conns[i]);
                continue;
            }
            if (stopping && t >= deadline + 10) {
                fprintf(stderr, "ws_load: echoes still missing 10 s after the end\n");
                errors++;
                return;
            }
            timeout = (int)(((stopping ? deadline + 10 : deadline) - t) * 1000) + 1;
        }
        int n = epoll_wait(ep, events, 256, timeout);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            perror("ws_load: epoll_wait");
            exit(1);
        }
        for (int i = 0; i < n; i++) on_event(events[i].data.ptr, events[i].events);
    }
}

static int setup_done(void) { return ready_conns == opt.connections; }
static int measure_done(void) { return finished_conns == opt.connections; }

/* --stream: reads ws_echo's frames at --read-rate, checking every payload byte. */
static void run_stream(struct conn *c, double *elapsed, long *frames, uint64_t *bytes) {
    static uint8_t pattern[STREAM_FRAME];
    ws_stream_pattern(pattern);
    char command[64];
    int n = snprintf(command, sizeof command, "stream %llu", (unsigned long long)opt.stream);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
    c->out_start = c->out_end = 0;
    append_frame(c, 1, (const uint8_t *)command, (size_t)n);
    if (send(c->fd, c->out, c->out_end, MSG_NOSIGNAL) != (ssize_t)c->out_end) {
        record_error(c, "sending the stream command failed");
        errors++;
        return;
    }
    double t0 = now_seconds();
    uint64_t frame_off = 0;
    size_t chunk = opt.read_rate > 0 && opt.read_rate < 4e6 ? 16384 : 65536;
    for (;;) {
        ssize_t r = recv(c->fd, rbuf, chunk, 0);
        if (r <= 0) {
            record_error(c, "the stream ended after %llu bytes: %s", (unsigned long long)*bytes,
                         r == 0 ? "closed" : strerror(errno));
            errors++;
            break;
        }
        const uint8_t *p = rbuf;
        size_t left = (size_t)r;
        int finished = 0;
        while (left > 0) {
            if (c->remaining == 0) {
                int whole = ws_header_take(&c->hdr, &p, &left, WS_UNMASKED);
                if (whole < 0) {
                    record_error(c, "a masked frame in the stream");
                    errors++;
                    finished = 1;
                    break;
                }
                if (!whole) break;
                uint64_t len = c->hdr.payload_len;
                c->remaining = len;
                frame_off = 0;
                if (c->hdr.opcode == 1) { /* `done` */
                    if (len != 4 || left < 4 || memcmp(p, "done", 4)) {
                        record_error(c, "an unexpected text frame in the stream");
                        errors++;
                    }
                    finished = 1;
                    break;
                }
                if (c->hdr.opcode != 2 || len > STREAM_FRAME) {
                    record_error(c, "an unexpected frame in the stream (opcode %d, %llu bytes)", c->hdr.opcode,
                                 (unsigned long long)len);
                    errors++;
                    finished = 1;
                    break;
                }
                (*frames)++;
            }
            size_t take = left < c->remaining ? left : (size_t)c->remaining;
            if (memcmp(p, pattern + frame_off, take) != 0) {
                record_error(c, "wrong bytes in the stream at %llu", (unsigned long long)*bytes);
                errors++;
                finished = 1;
                break;
            }
            frame_off += take;
            c->remaining -= take;
            *bytes += take;
            p += take;
            left -= take;
        }
        if (finished) break;
        if (opt.read_rate > 0) {
            double ahead = t0 + (double)*bytes / opt.read_rate - now_seconds();
            if (ahead > 0) {
                struct timespec ts = {(time_t)ahead, (long)((ahead - (time_t)ahead) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
    }
    *elapsed = now_seconds() - t0;
    if (*bytes != opt.stream && !first_error[0]) {
        record_error(c, "the stream carried %llu bytes", (unsigned long long)*bytes);
        errors++;
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static double parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': return v * 1e3;
    case 'm': case 'M': return v * 1e6;
    case 'g': case 'G': return v * 1e9;
    default: return v;
    }
}

int main(int argc, char **argv) {
    static struct option longopts[] = {
        {"port", required_argument, NULL, 'p'},       {"path", required_argument, NULL, 'P'},
        {"bearer-file", required_argument, NULL, 'b'}, {"connections", required_argument, NULL, 'c'},
        {"setup-concurrency", required_argument, NULL, 'C'}, {"size", required_argument, NULL, 's'},
        {"inflight", required_argument, NULL, 'i'},    {"duration", required_argument, NULL, 'd'},
        {"messages", required_argument, NULL, 'm'},    {"warmup", required_argument, NULL, 'w'},
        {"stream", required_argument, NULL, 'S'},      {"read-rate", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p': opt.port = atoi(optarg); break;
        case 'P': opt.path = optarg; break;
        case 'b': opt.bearer_file = optarg; break;
        case 'c': opt.connections = atoi(optarg); break;
        case 'C': opt.setup_concurrency = atoi(optarg); break;
        case 's': opt.size = (size_t)parse_size(optarg); break;
        case 'i': opt.inflight = atoi(optarg); break;
        case 'd': opt.duration = atof(optarg); break;
        case 'm': opt.messages = atol(optarg); break;
        case 'w': opt.warmup = atol(optarg); break;
        case 'S': opt.stream = (uint64_t)parse_size(optarg); break;
        case 'r': opt.read_rate = parse_size(optarg); break;
        default: return 2;
        }
    }
    if (!opt.port || opt.connections < 1 || opt.inflight < 1 || opt.size < 1) {
        fprintf(stderr, "ws_load: --port is required; --connections, --inflight and --size must be positive\n");
        return 2;
    }
    if (opt.stream) opt.connections = 1;
    if (opt.bearer_file) {
        char token[900] = {0};
        if (read_token(opt.bearer_file, token, sizeof token) < 0) {
            fprintf(stderr, "ws_load: cannot read %s\n", opt.bearer_file);
            return 1;
        }
        snprintf(bearer, sizeof bearer, "Authorization: Bearer %s\r\n", token);
    }
    snprintf(request_text, sizeof request_text,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: %%s\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
             opt.path, opt.port, bearer);
    signal(SIGPIPE, SIG_IGN);
    RAND_bytes((uint8_t *)&rng, sizeof rng);
    rng |= 1;
    payloads = malloc(opt.size + 256);
    RAND_bytes(payloads, (int)(opt.size + 256));
    rbuf = malloc(READ_CHUNK);
    conns = calloc((size_t)opt.connections, sizeof *conns);
    for (int i = 0; i < opt.connections; i++) {
        conns[i].index = i;
        conns[i].fd = -1;
        conns[i].sent_at = calloc((size_t)opt.inflight, sizeof(double));
    }
    ep = epoll_create1(0);

    open_next();
    run_loop(setup_done);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 1;

    phase_measured = 1;
    double t0 = now_seconds(), elapsed = 0;
    long frames = 0;
    uint64_t stream_bytes = 0;
    if (opt.stream) {
        run_stream(&conns[0], &elapsed, &frames, &stream_bytes);
        measured_messages = frames;
        measured_bytes = stream_bytes;
    } else {
        deadline = t0 + opt.duration;
        for (int i = 0; i < opt.connections; i++) {
            struct conn *c = &conns[i];
            c->sent = c->done = 0;
            c->quota = opt.messages > 0 ? opt.messages : -1;
            send_messages(c);
        }
        run_loop(measure_done);
        elapsed = opt.messages > 0 ? now_seconds() - t0 : opt.duration;
    }
    uint32_t p50 = 0, p99 = 0;
    if (nlat) {
        qsort(lat, nlat, sizeof *lat, cmp_u32);
        p50 = lat[(nlat - 1) * 50 / 100];
        p99 = lat[(nlat - 1) * 99 / 100];
    }
    long open_now = 0;
    for (int i = 0; i < opt.connections; i++) open_now += conns[i].state == OPEN;
    if (first_error[0]) fprintf(stderr, "ws_load: %s\n", first_error);
    printf("LKBENCH messages=%ld bytes=%llu duration_us=%lld p50_ns=%u p99_ns=%u errors=%ld open=%ld\n",
           measured_messages, (unsigned long long)measured_bytes, (long long)(elapsed * 1e6), p50, p99, errors,
           open_now);
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {} /* until the caller has read its counters */
    return 0;
}
