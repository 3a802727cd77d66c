#ifndef REACHD_COPENSSL_SHIM_H
#define REACHD_COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

// Swift imports no function-like macro: these are the few the client's TLS needs, as functions.

/// SNI: the server name the client asks for (SSL_set_tlsext_host_name).
static inline int reachd_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The oldest protocol version the client accepts (SSL_CTX_set_min_proto_version).
static inline int reachd_ssl_ctx_set_minimum_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

#endif
