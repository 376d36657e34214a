/* tunnel_load: the forward scenario's load generator (bench_forward.py compiles it with
 * gcc at run time). wrk cannot ask a proxy to CONNECT; this does, then many kept-alive
 * GETs on each tunnel.
 *
 * One thread per connection, blocking sockets. Each connection:
 *   with --connect: CONNECT HOST:PORT with Proxy-Authorization: Basic (--proxy-auth USER:PASS),
 *   expecting 200, then TLS (SNI and certificate name --sni, trusting --cafile only);
 *   without: plain HTTP to the port itself (a reverse route);
 *   then --warmup-requests GETs, and waits at a barrier for every other connection.
 * Once every connection is ready it prints `ready` and waits for a line on stdin (`go`),
 * so that the caller samples the proxy's CPU time (or zeroes callgrind's counters) with
 * no handshake inside the measured span. Then GETs: for --duration seconds, or exactly
 * --requests per connection. It prints one line,
 *   LKBENCH requests=N duration_us=N p50_us=N p99_us=N errors=N reconnects=N
 * and keeps the connections open until stdin ends, so that the caller reads the CPU time
 * (or dumps callgrind's counters) before any connection closes.
 *
 * With --fresh, every request has a connection of its own instead: opened (CONNECT and a
 * full TLS handshake, no session resumed), one GET, closed (close_notify, then close),
 * its latency counted from the connect; nothing is held open between the phases.
 *
 * A response is framed by Content-Length or chunked encoding and must be 200 with
 * --expect-bytes of body when given. A connection the server closes, or a failed request,
 * counts an error (a close after a `Connection: close` answer counts a reconnect instead);
 * either way the connection is opened again, handshakes included, while the run lasts.
 *
 * Build: gcc -O2 -pthread -o tunnel_load tunnel_load.c -lssl -lcrypto */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct {
    int port;
    const char *connect_target; /* host:port to CONNECT to, or NULL for plain HTTP */
    const char *proxy_auth;     /* user:pass */
    const char *cafile;
    const char *sni;
    const char *host_header;
    const char *path;
    int connections;
    double duration;
    long requests;        /* per connection, instead of a duration */
    long warmup_requests; /* per connection, before the barrier */
    long expect_bytes;    /* -1: any */
    int fresh;            /* a connection per request */
} opt = {.path = "/small.json", .connections = 16, .duration = 10, .warmup_requests = 10, .expect_bytes = -1};

static SSL_CTX *ssl_ctx;
static char request_text[1024];
static size_t request_len;
static char connect_text[1024];
static size_t connect_len;
static pthread_barrier_t ready_barrier, go_barrier;
static atomic_int stop_flag;
static atomic_int setup_failures;

struct conn {
    int fd;
    SSL *ssl;
    char buf[65536];
    size_t start, end; /* unread bytes buf[start..<end] */
};

struct worker {
    pthread_t thread;
    int index;
    long requests;
    long errors;
    long reconnects;
    uint32_t *lat; /* microseconds per request */
    size_t nlat, caplat;
    char error[256];
};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void conn_close(struct conn *c) {
    if (c->ssl) {
        SSL_shutdown(c->ssl); /* sends close_notify; the peer's is not awaited */
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    c->start = c->end = 0;
}

static int raw_write(struct conn *c, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w;
        if (c->ssl) {
            int r = SSL_write(c->ssl, p, (int)n);
            if (r <= 0) return -1;
            w = r;
        } else {
            w = send(c->fd, p, n, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* More bytes into the buffer; 0 at end of stream, -1 on error. */
static ssize_t fill(struct conn *c) {
    if (c->start == c->end) c->start = c->end = 0;
    if (c->end == sizeof c->buf) {
        if (c->start == 0) return -1; /* a line longer than the buffer */
        memmove(c->buf, c->buf + c->start, c->end - c->start);
        c->end -= c->start;
        c->start = 0;
    }
    for (;;) {
        ssize_t r;
        if (c->ssl) {
            int n = SSL_read(c->ssl, c->buf + c->end, (int)(sizeof c->buf - c->end));
            if (n <= 0) {
                int e = SSL_get_error(c->ssl, n);
                return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
            }
            r = n;
        } else {
            r = recv(c->fd, c->buf + c->end, sizeof c->buf - c->end, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return -1;
            if (r == 0) return 0;
        }
        c->end += (size_t)r;
        return r;
    }
}

/* The next line (without CRLF) into *line; its length, or -1. */
static ssize_t read_line(struct conn *c, char **line) {
    for (;;) {
        char *p = memmem(c->buf + c->start, c->end - c->start, "\r\n", 2);
        if (p) {
            *line = c->buf + c->start;
            size_t n = (size_t)(p - *line);
            *p = 0;
            c->start += n + 2;
            return (ssize_t)n;
        }
        if (fill(c) <= 0) return -1;
    }
}

static int skip_bytes(struct conn *c, long n) {
    while (n > 0) {
        if (c->start == c->end && fill(c) <= 0) return -1;
        size_t take = c->end - c->start;
        if ((long)take > n) take = (size_t)n;
        c->start += take;
        n -= (long)take;
    }
    return 0;
}

/* One response: its status, body length and whether it asked to close; -1 on error.
 * `tunnel`: the answer to CONNECT, whose 2xx has no body (RFC 9110 §9.3.6). */
static int read_response(struct conn *c, int tunnel, long *body, int *closing, char *why, size_t whylen) {
    char *line;
    if (read_line(c, &line) < 0) {
        snprintf(why, whylen, "no response (connection closed or failed)");
        return -1;
    }
    int status = 0;
    if (sscanf(line, "HTTP/1.%*d %d", &status) != 1) {
        snprintf(why, whylen, "bad status line: %.100s", line);
        return -1;
    }
    long length = -1;
    int chunked = 0;
    *closing = 0;
    for (;;) {
        ssize_t n = read_line(c, &line);
        if (n < 0) {
            snprintf(why, whylen, "response head cut short");
            return -1;
        }
        if (n == 0) break;
        if (strncasecmp(line, "content-length:", 15) == 0) length = strtol(line + 15, NULL, 10);
        else if (strncasecmp(line, "transfer-encoding:", 18) == 0 && strcasestr(line + 18, "chunked")) chunked = 1;
        else if (strncasecmp(line, "connection:", 11) == 0 && strcasestr(line + 11, "close")) *closing = 1;
    }
    *body = 0;
    if (tunnel && status / 100 == 2) return status;
    if (chunked) {
        for (;;) {
            if (read_line(c, &line) < 0) return -1;
            long size = strtol(line, NULL, 16);
            if (size == 0) {
                for (;;) { /* trailers up to the empty line */
                    ssize_t n = read_line(c, &line);
                    if (n < 0) return -1;
                    if (n == 0) break;
                }
                break;
            }
            if (skip_bytes(c, size + 2) < 0) return -1;
            *body += size;
        }
    } else if (length >= 0) {
        if (skip_bytes(c, length) < 0) {
            snprintf(why, whylen, "response body cut short");
            return -1;
        }
        *body = length;
    } else if (status != 204 && status != 304) {
        snprintf(why, whylen, "response without Content-Length or chunked encoding");
        return -1;
    }
    return status;
}

static int tcp_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* TCP, and with --connect the CONNECT exchange and the TLS handshake. */
static int conn_open(struct conn *c, char *why, size_t whylen) {
    c->fd = tcp_connect();
    c->ssl = NULL;
    c->start = c->end = 0;
    if (c->fd < 0) {
        snprintf(why, whylen, "connect to 127.0.0.1:%d: %s", opt.port, strerror(errno));
        return -1;
    }
    if (!opt.connect_target) return 0;
    if (raw_write(c, connect_text, connect_len) < 0) {
        snprintf(why, whylen, "writing CONNECT failed");
        goto fail;
    }
    long body;
    int closing;
    /* The proxy's answer to CONNECT: a head and, for a refusal, a body. */
    int status = read_response(c, 1, &body, &closing, why, whylen);
    if (status != 200) {
        if (status > 0) snprintf(why, whylen, "CONNECT %s answered %d", opt.connect_target, status);
        goto fail;
    }
    if (c->start != c->end) {
        snprintf(why, whylen, "bytes after the CONNECT answer");
        goto fail;
    }
    c->ssl = SSL_new(ssl_ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, opt.sni);
    SSL_set1_host(c->ssl, opt.sni);
    if (SSL_connect(c->ssl) != 1) {
        unsigned long e = ERR_get_error();
        long v = SSL_get_verify_result(c->ssl);
        snprintf(why, whylen, "TLS handshake failed: %s (verify: %s)", e ? ERR_error_string(e, NULL) : "connection closed",
                 X509_verify_cert_error_string(v));
        ERR_clear_error();
        goto fail;
    }
    return 0;
fail:
    conn_close(c);
    return -1;
}

static void record(struct worker *w, double seconds) {
    if (w->nlat == w->caplat) {
        w->caplat = w->caplat ? w->caplat * 2 : 65536;
        w->lat = realloc(w->lat, w->caplat * sizeof *w->lat);
        if (!w->lat) abort();
    }
    double us = seconds * 1e6;
    w->lat[w->nlat++] = us > 4e9 ? 4000000000u : (uint32_t)us;
}

/* One GET; 0 done, 1 done and the server closes, -1 failed. */
static int one_request(struct conn *c, struct worker *w, int measured) {
    double t0 = now_seconds();
    if (raw_write(c, request_text, request_len) < 0) {
        snprintf(w->error, sizeof w->error, "writing the request failed");
        return -1;
    }
    long body;
    int closing;
    int status = read_response(c, 0, &body, &closing, w->error, sizeof w->error);
    if (status < 0) return -1;
    if (status != 200 || (opt.expect_bytes >= 0 && body != opt.expect_bytes)) {
        snprintf(w->error, sizeof w->error, "GET %s answered %d with %ld bytes", opt.path, status, body);
        return -1;
    }
    if (measured) {
        w->requests++;
        record(w, now_seconds() - t0);
    }
    return closing;
}

/* --fresh: open, one GET, close; 0 or -1. */
static int fresh_request(struct conn *c, struct worker *w, int measured) {
    double t0 = now_seconds();
    if (conn_open(c, w->error, sizeof w->error) < 0) return -1;
    int r = one_request(c, w, 0);
    conn_close(c);
    if (r < 0) return -1;
    if (measured) {
        w->requests++;
        record(w, now_seconds() - t0);
    }
    return 0;
}

static void *run_worker(void *arg) {
    struct worker *w = arg;
    struct conn *c = calloc(1, sizeof *c);
    c->fd = -1;
    if (opt.fresh) {
        int ok = 1;
        for (long i = 0; ok && i < opt.warmup_requests; i++) ok = fresh_request(c, w, 0) == 0;
        if (!ok) atomic_fetch_add(&setup_failures, 1);
        pthread_barrier_wait(&ready_barrier);
        pthread_barrier_wait(&go_barrier);
        for (long i = 0; ok && !atomic_load(&setup_failures)
                         && (opt.requests ? i < opt.requests : !atomic_load_explicit(&stop_flag, memory_order_relaxed));
             i++) {
            if (fresh_request(c, w, 1) < 0) {
                w->errors++;
                if (opt.requests) break;
                usleep(10000);
            }
        }
        return c;
    }
    int ok = conn_open(c, w->error, sizeof w->error) == 0;
    for (long i = 0; ok && i < opt.warmup_requests; i++) {
        int r = one_request(c, w, 0);
        if (r < 0) ok = 0;
        else if (r == 1) {
            conn_close(c);
            ok = conn_open(c, w->error, sizeof w->error) == 0;
        }
    }
    if (!ok) atomic_fetch_add(&setup_failures, 1);
    pthread_barrier_wait(&ready_barrier);
    pthread_barrier_wait(&go_barrier);
    if (!ok || atomic_load(&setup_failures)) goto done;
    for (long i = 0; opt.requests ? i < opt.requests : !atomic_load_explicit(&stop_flag, memory_order_relaxed); i++) {
        int r = one_request(c, w, 1);
        if (r == 0) continue;
        if (r < 0) w->errors++;
        else w->reconnects++;
        conn_close(c);
        while (!atomic_load(&stop_flag)) {
            if (conn_open(c, w->error, sizeof w->error) == 0) break;
            w->errors++;
            if (opt.requests) goto done;
            usleep(10000);
        }
        if (c->fd < 0) break;
    }
done:
    /* The connection stays open until the caller is done reading counters; main closes it. */
    return c;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void usage(void) {
    fprintf(stderr,
            "usage: tunnel_load --port PORT [--connect HOST:PORT --proxy-auth USER:PASS --cafile CA --sni NAME]\n"
            "                   [--host HOST] [--path PATH] [--connections N] [--duration S | --requests N]\n"
            "                   [--warmup-requests N] [--expect-bytes N] [--fresh]\n");
    exit(2);
}

static char *base64(const char *in) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in);
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)in[i + 2];
        *o++ = t[v >> 18 & 63];
        *o++ = t[v >> 12 & 63];
        *o++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? t[v & 63] : '=';
    }
    *o = 0;
    return out;
}

int main(int argc, char **argv) {
    static struct option longopts[] = {
        {"port", required_argument, 0, 'p'},       {"connect", required_argument, 0, 'C'},
        {"proxy-auth", required_argument, 0, 'a'}, {"cafile", required_argument, 0, 'c'},
        {"sni", required_argument, 0, 's'},        {"host", required_argument, 0, 'H'},
        {"path", required_argument, 0, 'P'},       {"connections", required_argument, 0, 'n'},
        {"duration", required_argument, 0, 'd'},   {"requests", required_argument, 0, 'r'},
        {"warmup-requests", required_argument, 0, 'w'}, {"expect-bytes", required_argument, 0, 'e'},
        {"fresh", no_argument, 0, 'f'},
        {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p': opt.port = atoi(optarg); break;
        case 'C': opt.connect_target = optarg; break;
        case 'a': opt.proxy_auth = optarg; break;
        case 'c': opt.cafile = optarg; break;
        case 's': opt.sni = optarg; break;
        case 'H': opt.host_header = optarg; break;
        case 'P': opt.path = optarg; break;
        case 'n': opt.connections = atoi(optarg); break;
        case 'd': opt.duration = atof(optarg); break;
        case 'r': opt.requests = atol(optarg); break;
        case 'w': opt.warmup_requests = atol(optarg); break;
        case 'e': opt.expect_bytes = atol(optarg); break;
        case 'f': opt.fresh = 1; break;
        default: usage();
        }
    }
    if (opt.port <= 0 || opt.connections <= 0 || (opt.connect_target && (!opt.cafile || !opt.sni))) usage();
    char host[256];
    if (!opt.host_header) {
        if (opt.connect_target) {
            snprintf(host, sizeof host, "%s", opt.sni);
        } else {
            snprintf(host, sizeof host, "127.0.0.1:%d", opt.port);
        }
        opt.host_header = host;
    }
    request_len = (size_t)snprintf(request_text, sizeof request_text,
                                   "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tunnel_load\r\nAccept: */*\r\n\r\n", opt.path,
                                   opt.host_header);
    if (opt.connect_target) {
        char auth[512] = "";
        if (opt.proxy_auth) snprintf(auth, sizeof auth, "Proxy-Authorization: Basic %s\r\n", base64(opt.proxy_auth));
        connect_len = (size_t)snprintf(connect_text, sizeof connect_text, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
                                       opt.connect_target, opt.connect_target, auth);
        ssl_ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
        if (SSL_CTX_load_verify_locations(ssl_ctx, opt.cafile, NULL) != 1) {
            fprintf(stderr, "tunnel_load: cannot read %s\n", opt.cafile);
            return 1;
        }
    }

    int n = opt.connections;
    struct worker *ws = calloc((size_t)n, sizeof *ws);
    pthread_barrier_init(&ready_barrier, NULL, (unsigned)n + 1);
    pthread_barrier_init(&go_barrier, NULL, (unsigned)n + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < n; i++) {
        ws[i].index = i;
        if (pthread_create(&ws[i].thread, &attr, run_worker, &ws[i]) != 0) {
            fprintf(stderr, "tunnel_load: pthread_create failed\n");
            return 1;
        }
    }
    pthread_barrier_wait(&ready_barrier);
    if (atomic_load(&setup_failures)) {
        for (int i = 0; i < n; i++)
            if (ws[i].error[0]) {
                fprintf(stderr, "tunnel_load: connection %d: %s\n", i, ws[i].error);
                break;
            }
        printf("failed %d of %d connections\n", atomic_load(&setup_failures), n);
        fflush(stdout);
        pthread_barrier_wait(&go_barrier);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 1;
    double t0 = now_seconds();
    pthread_barrier_wait(&go_barrier);
    if (!opt.requests) {
        struct timespec ts = {(time_t)opt.duration, (long)((opt.duration - (time_t)opt.duration) * 1e9)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
        atomic_store(&stop_flag, 1);
    }
    struct conn **conns = calloc((size_t)n, sizeof *conns);
    for (int i = 0; i < n; i++) pthread_join(ws[i].thread, (void **)&conns[i]);
    double elapsed = now_seconds() - t0;

    long requests = 0, errors = 0, reconnects = 0;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        requests += ws[i].requests;
        errors += ws[i].errors;
        reconnects += ws[i].reconnects;
        total += ws[i].nlat;
    }
    uint32_t *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        memcpy(all + k, ws[i].lat, ws[i].nlat * sizeof *all);
        k += ws[i].nlat;
    }
    qsort(all, total, sizeof *all, cmp_u32);
#define PCT(p) (total ? all[(size_t)((total * (p) + 99) / 100) - 1] : 0)
    for (int i = 0; i < n; i++)
        if (ws[i].errors && ws[i].error[0]) {
            fprintf(stderr, "tunnel_load: connection %d: %s\n", i, ws[i].error);
            break;
        }
    printf("LKBENCH requests=%ld duration_us=%ld p50_us=%u p99_us=%u errors=%ld reconnects=%ld\n", requests,
           (long)(elapsed * 1e6), PCT(50), PCT(99), errors, reconnects);
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {} /* until the caller has read its counters */
    for (int i = 0; i < n; i++) conn_close(conns[i]);
    return 0;
}
