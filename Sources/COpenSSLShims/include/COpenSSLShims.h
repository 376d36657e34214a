#ifndef LATCHKEY_COPENSSLSHIMS_H
#define LATCHKEY_COPENSSLSHIMS_H

// OpenSSL configures contexts through macros over SSL_CTX_ctrl, which Swift does not
// import: one fixed wrapper per macro used. No logic lives here.
#include <openssl/ssl.h>

long lk_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version);
long lk_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version);
long lk_ssl_ctx_set_mode(SSL_CTX *ctx, long mode);

#endif
