#include "COpenSSLShims.h"

long lk_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
long lk_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
long lk_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long lk_ssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long lk_ssl_ctx_sess_set_cache_size(SSL_CTX *ctx, long size) { return SSL_CTX_sess_set_cache_size(ctx, size); }
long lk_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *groups) { return SSL_CTX_set1_groups_list(ctx, groups); }
long lk_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) { return SSL_CTX_add1_chain_cert(ctx, certificate); }
long lk_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
