/// Where the Redis store connects: `redis://[USER@]HOST[:PORT][/DB]`. The password is not
/// part of it: it comes from a secret (`store.password`), so that it is never in the
/// configuration's text, an argument list or a log line.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let defaultPort = 6379

    public var host: String
    public var port: Int
    /// SELECT's number; 0 by default.
    public var database: Int
    /// For Redis 6 ACLs (`AUTH user password`); nil authenticates as the default user.
    public var username: String?

    public init(host: String, port: Int = RedisEndpoint.defaultPort, database: Int = 0, username: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.username = username
    }

    /// Reads a `redis://` URL; the error says what is wrong and what is expected.
    public init(url: String) throws(RedisEndpoint.URLError) {
        func invalid(_ why: String) -> URLError {
            URLError("\(why) (expected redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0)")
        }
        if url.hasPrefix("rediss://") {
            // Debian 12's hiredis (0.14) is built without TLS.
            throw URLError("rediss:// (TLS) is not supported; use redis:// on a trusted network, "
                + "or reach Redis through a TLS tunnel such as stunnel")
        }
        guard url.hasPrefix("redis://") else { throw invalid("the URL must start with redis://") }
        var rest = Substring(url.dropFirst("redis://".count))
        guard !rest.contains("?"), !rest.contains("#") else { throw invalid("the URL may not have a query or a fragment") }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var username: String?
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            guard !user.contains(":") else {
                throw URLError("the Redis URL holds a password; give it with store.password "
                    + "({env: NAME} or {file: PATH}) so that it is never in the configuration's text")
            }
            guard !user.isEmpty else { throw invalid("an empty user name before @") }
            username = String(user)
            rest = rest[rest.index(after: at)...]
        }
        var host = rest, port = Self.defaultPort
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("an IPv6 address without its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                port = try Self.port(after.dropFirst(), invalid)
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...], invalid)
        }
        guard !host.isEmpty else { throw invalid("no host") }
        var database = 0
        if !path.isEmpty {
            guard let number = Int(path), number >= 0 else { throw invalid("the path must be a database number") }
            database = number
        }
        self.init(host: String(host), port: port, database: database, username: username)
    }

    private static func port(_ text: Substring, _ invalid: (String) -> URLError) throws(RedisEndpoint.URLError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else { throw invalid("the port must be a number from 1 to 65535") }
        return port
    }

    /// Why a `redis://` URL is refused: the message says what to write instead.
    public struct URLError: Error, Sendable, Equatable {
        public let message: String

        init(_ message: String) {
            self.message = message
        }
    }

    /// `redis://host:port/db`, for logs: never a password.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "redis://\(username.map { "\($0)@" } ?? "")\(hostPart):\(port)/\(database)"
    }
}
