/* ws_proto.h: the WebSocket (RFC 6455) pieces that both ends of the websocket scenario speak,
 * Benchmarks/ws_echo.c (the upstream) and Benchmarks/ws_load.c (the load generator): the
 * handshake's accept value, frame headers written and read, the masking of payloads, the
 * `stream` pattern, and the token file. Included by both (gcc finds it beside them). */
#ifndef WS_PROTO_H
#define WS_PROTO_H

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Sec-WebSocket-Accept for a Sec-WebSocket-Key (§4.2.2): base64 of the SHA-1 of the key and
 * the protocol's GUID; `accept` takes 29 bytes. */
static inline void ws_accept(const char *key, char *accept) {
    char joined[256];
    snprintf(joined, sizeof joined, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    uint8_t digest[SHA_DIGEST_LENGTH];
    SHA1((const uint8_t *)joined, strlen(joined), digest);
    EVP_EncodeBlock((uint8_t *)accept, digest, SHA_DIGEST_LENGTH);
}

/* A frame's MASK bit: set on every frame from a client, on none from a server (§5.1). */
#define WS_UNMASKED 0
#define WS_MASKED 1

/* Writes a frame's header (§5.2) up to its masking key: FIN, the opcode, the MASK bit when
 * `masked`, the payload length. Returns its size: 2, 4 or 10 bytes. */
static inline size_t ws_frame_header(uint8_t *h, int fin, int opcode, int masked, uint64_t len) {
    uint8_t mask = masked ? 0x80 : 0;
    h[0] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    if (len < 126) {
        h[1] = (uint8_t)(mask | len);
        return 2;
    }
    if (len < 65536) {
        h[1] = mask | 126;
        h[2] = (uint8_t)(len >> 8);
        h[3] = (uint8_t)len;
        return 4;
    }
    h[1] = mask | 127;
    for (int i = 0; i < 8; i++) h[2 + i] = (uint8_t)(len >> (56 - 8 * i));
    return 10;
}

/* dst = src XOR the masking key (§5.3); `phase`: the offset of src[0] in the frame's payload.
 * Eight bytes at a time. */
static inline void ws_mask(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t key[4], uint64_t phase) {
    uint8_t k[8];
    for (int i = 0; i < 8; i++) k[i] = key[(phase + (uint64_t)i) & 3];
    uint64_t k64;
    memcpy(&k64, k, 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, 8);
        v ^= k64;
        memcpy(dst + i, &v, 8);
    }
    for (; i < n; i++) dst[i] = src[i] ^ k[i & 7];
}

/* A frame's header as its bytes arrive: 2 bytes, the extended payload length (2 or 8 bytes
 * when the 7-bit one is 126 or 127), and the masking key (4 bytes) when the MASK bit is set.
 * Once whole, its fields are those of the frame whose payload follows. */
struct ws_header {
    uint8_t b[14];
    size_t len; /* bytes of the next header read so far */
    int fin, opcode;
    uint64_t payload_len;
    uint8_t key[4]; /* when masked */
};

/* Moves bytes from *p (*n of them, both advanced) into h until its header is whole. Returns
 * 1 once it is (its fields set, h ready for the next one), 0 when the bytes ran out first,
 * -1 as soon as its MASK bit is not `masked` (WS_MASKED or WS_UNMASKED). */
static inline int ws_header_take(struct ws_header *h, const uint8_t **p, size_t *n, int masked) {
    while (*n > 0) {
        h->b[h->len++] = *(*p)++;
        (*n)--;
        if (h->len < 2) continue;
        if (((h->b[1] & 0x80) != 0) != (masked != 0)) return -1;
        size_t len7 = h->b[1] & 0x7f;
        size_t size = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (masked ? 4 : 0);
        if (h->len < size) continue;
        uint64_t len = len7;
        if (len7 == 126) len = ((uint64_t)h->b[2] << 8) | h->b[3];
        if (len7 == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) len = (len << 8) | h->b[2 + i];
        }
        if (masked) memcpy(h->key, h->b + size - 4, 4);
        h->fin = (h->b[0] & 0x80) != 0;
        h->opcode = h->b[0] & 0x0f;
        h->payload_len = len;
        h->len = 0;
        return 1;
    }
    return 0;
}

/* ws_echo's answer to `stream N`: binary frames of STREAM_FRAME bytes (the last shorter)
 * whose byte i is i % 251, which ws_load checks. */
#define STREAM_FRAME 65536

static inline void ws_stream_pattern(uint8_t *pattern) {
    for (size_t i = 0; i < STREAM_FRAME; i++) pattern[i] = (uint8_t)(i % 251);
}

/* The token: the first line of `path`, without its line end. 0, or -1 if it cannot be read. */
static inline int read_token(const char *path, char *token, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int read = fgets(token, (int)size, f) != NULL;
    fclose(f);
    if (!read) return -1;
    token[strcspn(token, "\r\n")] = 0;
    return 0;
}

#endif
