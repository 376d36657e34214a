#ifndef LATCHKEY_COPENSSLSHIMS_H
#define LATCHKEY_COPENSSLSHIMS_H

// OpenSSL configures contexts through macros over SSL_CTX_ctrl, which Swift does not
// import: one fixed wrapper per macro used. No logic lives here.
#include <openssl/core_names.h>
#include <openssl/ssl.h>

long lk_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version);
long lk_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version);
long lk_ssl_ctx_set_mode(SSL_CTX *ctx, long mode);
long lk_ssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode);
long lk_ssl_ctx_sess_set_cache_size(SSL_CTX *ctx, long size);
long lk_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *groups);
long lk_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *certificate);
long lk_ssl_set_tlsext_host_name(SSL *ssl, const char *name);

// SSL_OP_* are SSL_OP_BIT(n) expressions with casts, which Swift does not import.
static const uint64_t LK_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t LK_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
// XN_FLAG_RFC2253 is an OR over casts, likewise.
static const unsigned long LK_XN_FLAG_RFC2253 = XN_FLAG_RFC2253;

#endif
