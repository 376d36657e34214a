#ifndef LATCHKEY_CCURLSHIMS_H
#define LATCHKEY_CCURLSHIMS_H

// Swift does not import C variadic functions, so curl_easy_setopt, curl_multi_setopt,
// curl_share_setopt and curl_easy_getinfo get one fixed-arity wrapper per argument type.
// No logic lives here.
#include <curl/curl.h>

CURLcode lk_curl_easy_setopt_long(CURL *h, CURLoption o, long v);
CURLcode lk_curl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v);
CURLcode lk_curl_easy_setopt_ptr(CURL *h, CURLoption o, void *v);
CURLcode lk_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode lk_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode lk_curl_easy_setopt_write(CURL *h, curl_write_callback f);
CURLcode lk_curl_easy_setopt_header(CURL *h, curl_write_callback f);
CURLcode lk_curl_easy_setopt_read(CURL *h, curl_read_callback f);
CURLcode lk_curl_easy_setopt_sockopt(CURL *h, curl_sockopt_callback f);
CURLcode lk_curl_easy_setopt_opensocket(CURL *h, curl_opensocket_callback f);
CURLcode lk_curl_easy_setopt_closesocket(CURL *h, curl_closesocket_callback f);

CURLMcode lk_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v);
CURLMcode lk_curl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v);
CURLMcode lk_curl_multi_setopt_socketfunction(CURLM *m, curl_socket_callback f);
CURLMcode lk_curl_multi_setopt_timerfunction(CURLM *m, curl_multi_timer_callback f);

CURLSHcode lk_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v);
CURLSHcode lk_curl_share_setopt_ptr(CURLSH *s, CURLSHoption o, void *v);
CURLSHcode lk_curl_share_setopt_lock(CURLSH *s, curl_lock_function f);
CURLSHcode lk_curl_share_setopt_unlock(CURLSH *s, curl_unlock_function f);

CURLcode lk_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode lk_curl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v);
CURLcode lk_curl_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v);
CURLcode lk_curl_easy_getinfo_socket(CURL *h, CURLINFO i, curl_socket_t *v);

/// CURL_GLOBAL_DEFAULT and friends are macros built from other macros.
CURLcode lk_curl_global_init_default(void);

#endif
