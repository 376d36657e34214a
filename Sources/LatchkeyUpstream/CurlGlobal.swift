import CCurlShims

/// curl_global_init(CURL_GLOBAL_DEFAULT). Call once from the executable's `main`, before any
/// thread exists: libcurl's global setup (OpenSSL included) is not thread-safe.
@discardableResult
public func initializeCurlGlobally() -> Bool {
    lk_curl_global_init_default() == CURLE_OK
}
