import CCurlShims
#if canImport(Glibc)
import Glibc
#endif

/// One cookie store kept by libcurl's cookie engine (RFC 6265: domain and path matching,
/// expiry, Secure, a cookie replacing the one of the same name, domain and path), shared by
/// every transfer that names it, whichever loop runs the transfer: a curl share handle
/// (CURLSH) holding CURL_LOCK_DATA_COOKIE, as curl's `threaded-shared-conn.c` shares its
/// data between threads.
///
/// Transfers attach it with `UpstreamRequest.cookieJar`. The cookies leave and enter it as
/// lines of the Netscape cookie-file format, the form CURLINFO_COOKIELIST gives and
/// CURLOPT_COOKIELIST takes, for keeping the jar across restarts.
///
/// `@unchecked Sendable`: curl calls `lock`/`unlock` around every use of the share's data,
/// from whichever thread uses it; one pthread mutex per kind of shared data makes those
/// uses exclusive. The handle and the mutexes are made in `init` and freed in `deinit`,
/// after the last easy handle that named the jar (each holds it) has let go.
public final class CookieJar: @unchecked Sendable {
    let share: UnsafeMutableRawPointer
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private static let kinds = Int(CURL_LOCK_DATA_LAST.rawValue)

    public init() throws(UpstreamError) {
        guard let share = curl_share_init() else { throw UpstreamError(.other, detail: "curl_share_init failed") }
        self.share = share
        mutexes = .allocate(capacity: Self.kinds)
        for kind in 0..<Self.kinds { pthread_mutex_init(mutexes + kind, nil) }
        var ok = lk_curl_share_setopt_ptr(share, CURLSHOPT_USERDATA, Unmanaged.passUnretained(self).toOpaque()) == CURLSHE_OK
        ok = ok && lk_curl_share_setopt_lock(share, cookieJarLock) == CURLSHE_OK
        ok = ok && lk_curl_share_setopt_unlock(share, cookieJarUnlock) == CURLSHE_OK
        ok = ok && lk_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue)) == CURLSHE_OK
        guard ok else { throw UpstreamError(.other, detail: "curl_share_setopt failed") }
    }

    deinit {
        curl_share_cleanup(share)
        for kind in 0..<Self.kinds { pthread_mutex_destroy(mutexes + kind) }
        mutexes.deallocate()
    }

    fileprivate func lock(_ data: curl_lock_data) {
        pthread_mutex_lock(mutexes + Int(data.rawValue))
    }

    fileprivate func unlock(_ data: curl_lock_data) {
        pthread_mutex_unlock(mutexes + Int(data.rawValue))
    }

    /// Every cookie in the jar, session cookies included, one Netscape cookie-file line each
    /// (CURLINFO_COOKIELIST).
    public func lines() -> [String] {
        withEngine { handle in
            var list: UnsafeMutableRawPointer?
            guard lk_curl_easy_getinfo_ptr(handle, CURLINFO_COOKIELIST, &list) == CURLE_OK, let list else { return [] }
            let first = list.assumingMemoryBound(to: curl_slist.self)
            defer { curl_slist_free_all(first) }
            var lines: [String] = []
            var item: UnsafeMutablePointer<curl_slist>? = first
            while let current = item {
                if let data = current.pointee.data { lines.append(String(cString: data)) }
                item = current.pointee.next
            }
            return lines
        } ?? []
    }

    /// Adds cookies given as Netscape cookie-file lines (CURLOPT_COOKIELIST); a line the
    /// engine cannot read is skipped, as curl skips it in a cookie file.
    public func restore(_ lines: [String]) {
        withEngine { handle in
            for line in lines where !line.isEmpty {
                _ = lk_curl_easy_setopt_string(handle, CURLOPT_COOKIELIST, line)
            }
        }
    }

    /// Forgets every cookie (CURLOPT_COOKIELIST "ALL").
    public func clear() {
        withEngine { handle in _ = lk_curl_easy_setopt_string(handle, CURLOPT_COOKIELIST, "ALL") }
    }

    /// A short-lived easy handle on this jar with the engine on, for reading or changing
    /// the jar outside any transfer; nil when curl cannot make one.
    @discardableResult
    private func withEngine<T>(_ body: (UnsafeMutableRawPointer) -> T) -> T? {
        guard let handle = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(handle) }
        guard Self.attach(handle, to: self) == CURLE_OK else { return nil }
        return body(handle)
    }

    /// Points an easy handle at the jar and turns its cookie engine on (CURLOPT_COOKIEFILE
    /// "" reads no file), in that order, so that its cookies go to the share.
    static func attach(_ handle: UnsafeMutableRawPointer, to jar: CookieJar) -> CURLcode {
        var status = CurlStatus()
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_SHARE, jar.share))
        status.check(lk_curl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, ""))
        return status.code
    }
}

// MARK: C callbacks: capture-free, context through Unmanaged (see STYLE.md)

private let cookieJarLock: curl_lock_function = { _, data, _, userp in
    Unmanaged<CookieJar>.fromOpaque(userp!).takeUnretainedValue().lock(data)
}

private let cookieJarUnlock: curl_unlock_function = { _, data, userp in
    Unmanaged<CookieJar>.fromOpaque(userp!).takeUnretainedValue().unlock(data)
}
