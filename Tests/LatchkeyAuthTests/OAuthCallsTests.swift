import Foundation
import LatchkeyHTTP
import LatchkeyUpstream
import Synchronization
import Testing
@testable import LatchkeyAuth

/// The endpoint calls end to end: `AuthHTTPClient` against a stub IdP over loopback.
@Suite(.serialized) struct OAuthCallsTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let options = UpstreamOptions()

    @Test func podioPasswordGrant() async throws {
        let idp = try LoopbackServer { request in
            guard request.method == "POST", request.target == "/oauth/token/v2",
                  request.bodyText == "grant_type=password&username=me%40example.com&password=pw&client_id=podio-app&client_secret=cs"
            else { return .json(400, #"{"error":"invalid_request"}"#) }
            return .json(200, #"{"access_token":"podio-at","token_type":"bearer","expires_in":28800,"refresh_token":"podio-rt","ref":{"type":"user","id":1}}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let request = TokenRequest(endpoint: idp.url + "/oauth/token/v2", grant: .password(username: "me@example.com", password: "pw"),
                                   clientAuthentication: .clientSecretPost(id: "podio-app", secret: "cs"))
        let token = try await requestToken(request, client: client, options: options, now: now)
        #expect(token == TokenSet(accessToken: "podio-at", tokenType: "bearer", refreshToken: "podio-rt",
                                  expiresAt: now.addingTimeInterval(28800), obtainedAt: now))
        #expect(idp.requests.first?.field("Accept") == "application/json")
        #expect(idp.requests.first?.field("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func aRefusedRefreshIsInvalidGrantWithoutTheToken() async throws {
        let idp = try LoopbackServer { request in
            let token = FormEncoding.decode(request.bodyText).first { $0.0 == "refresh_token" }?.1 ?? "?"
            return .json(400, #"{"error":"invalid_grant","error_description":"unknown refresh token \#(token)"}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let request = TokenRequest(endpoint: idp.url + "/token", grant: .refreshToken("rt-4f8a9c"), clientAuthentication: .none(id: "cli"))
        let error = await #expect(throws: TokenEndpointError.self) {
            try await requestToken(request, client: client, options: options, now: now)
        }
        #expect(error?.isInvalidGrant == true)
        #expect(error?.message == "the authorization server refused the request with invalid_grant (HTTP 400): unknown refresh token [redacted]")
    }

    @Test func transportFailuresAndOversizedAnswers() async throws {
        let idp = try LoopbackServer { _ in .json(200, #"{"access_token":""# + String(repeating: "a", count: 2 << 20) + #""}"#) }
        let client = try makeClient()
        defer { client.shutdown() }
        let big = await #expect(throws: TokenEndpointError.self) {
            try await requestToken(TokenRequest(endpoint: idp.url, grant: .clientCredentials, clientAuthentication: nil),
                                   client: client, options: options, now: now)
        }
        #expect(big == .responseTooLarge(limit: 1 << 20))
        let port = try LoopbackServer.closedPort()
        let refused = await #expect(throws: TokenEndpointError.self) {
            try await requestToken(TokenRequest(endpoint: "http://127.0.0.1:\(port)/token", grant: .clientCredentials,
                                                clientAuthentication: .clientSecretPost(id: "c", secret: "s3cr3t")),
                                   client: client, options: options, now: now)
        }
        if case .transport(let transport) = refused { #expect(transport.code == .connectFailed) } else { Issue.record("not a transport error") }
        #expect(refused?.isRetryable == true)
    }

    /// OIDC's URL first; its 404 moves on to RFC 8414's.
    @Test func discoveryFallsBackToTheRFC8414URL() async throws {
        let port = Mutex<UInt16>(0)
        let idp = try LoopbackServer { request in
            guard request.target == "/.well-known/oauth-authorization-server/tenant" else { return .response(404, body: "nope") }
            let issuer = "http://127.0.0.1:\(port.withLock { $0 })/tenant"
            return .json(200, #"{"issuer":"\#(issuer)","token_endpoint":"\#(issuer)/token"}"#)
        }
        port.withLock { $0 = idp.port }
        let client = try makeClient()
        defer { client.shutdown() }
        let document = try await fetchDiscoveryDocument(issuer: idp.url + "/tenant", client: client, options: options, now: now)
        #expect(document.tokenEndpoint == idp.url + "/tenant/token")
        #expect(idp.requests.map(\.target) == ["/tenant/.well-known/openid-configuration", "/.well-known/oauth-authorization-server/tenant"])
    }

    @Test func discoveryFailures() async throws {
        let idp = try LoopbackServer { _ in .response(404, [("Content-Type", "text/html")], body: "<h1>Not Found</h1>") }
        let client = try makeClient()
        defer { client.shutdown() }
        await #expect(throws: TokenEndpointError.unexpectedStatus(status: 404, mediaType: "text/html", retryAfter: nil)) {
            try await fetchDiscoveryDocument(issuer: idp.url, client: client, options: options, now: now)
        }
        #expect(idp.requests.count == 2)
        await #expect(throws: TokenEndpointError.invalidIssuer("https://idp.example?x=1")) {
            try await fetchDiscoveryDocument(issuer: "https://idp.example?x=1", client: client, options: options, now: now)
        }
    }

    @Test func userinfoCheck() async throws {
        let idp = try LoopbackServer { request in
            switch request.field("Authorization") {
            case "Bearer good": .json(200, #"{"sub":"auth0|1"}"#)
            case "Bearer expired": .response(401, [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            default: .response(500, [("Content-Type", "text/html")], body: "<p>oops</p>")
            }
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let endpoint = idp.url + "/userinfo"
        #expect(try await checkToken("good", userinfoEndpoint: endpoint, client: client, options: options, now: now) == .valid)
        #expect(try await checkToken("expired", userinfoEndpoint: endpoint, client: client, options: options, now: now) == .invalid)
        let error = await #expect(throws: TokenEndpointError.self) {
            try await checkToken("other", userinfoEndpoint: endpoint, client: client, options: options, now: now)
        }
        #expect(error == .unexpectedStatus(status: 500, mediaType: "text/html", retryAfter: nil))
        #expect(idp.requests.allSatisfy { $0.method == "GET" && $0.target == "/userinfo" })
    }

    /// RFC 7662 §2.2: `active` is the verdict; an answer without it is an error.
    @Test func introspection() async throws {
        let idp = try LoopbackServer { request in
            if request.bodyText.hasPrefix("token=live") { return .json(200, #"{"active":true,"scope":"read"}"#) }
            if request.bodyText.hasPrefix("token=dead") { return .json(200, #"{"active":false}"#) }
            return .json(200, #"{"scope":"read"}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let auth = ClientAuthentication.clientSecretBasic(id: "rs", secret: "rs-secret")
        func introspect(_ token: String) async throws -> TokenValidity {
            try await introspectToken(TokenSubmission(endpoint: idp.url + "/introspect", token: token, tokenTypeHint: "access_token",
                                                      clientAuthentication: auth), client: client, options: options, now: now)
        }
        #expect(try await introspect("live") == .valid)
        #expect(try await introspect("dead") == .invalid)
        let error = await #expect(throws: TokenEndpointError.self) { try await introspect("odd") }
        #expect(error?.message.contains("active") == true)
        #expect(idp.requests.first?.bodyText == "token=live&token_type_hint=access_token")
        #expect(idp.requests.first?.field("Authorization")?.hasPrefix("Basic ") == true)
    }

    /// RFC 7009 §2.2: 200 whatever the token's state; 503 with Retry-After is retryable.
    @Test func revocation() async throws {
        let idp = try LoopbackServer { request in
            request.bodyText.contains("token=busy") ? .response(503, [("Retry-After", "3")]) : .response(200)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        try await revokeToken(TokenSubmission(endpoint: idp.url + "/revoke", token: "rt", tokenTypeHint: "refresh_token",
                                                clientAuthentication: .none(id: "cli")), client: client, options: options, now: now)
        #expect(idp.requests.first?.bodyText == "token=rt&token_type_hint=refresh_token&client_id=cli")
        let error = await #expect(throws: TokenEndpointError.self) {
            try await revokeToken(TokenSubmission(endpoint: idp.url + "/revoke", token: "busy", clientAuthentication: nil),
                                  client: client, options: options, now: now)
        }
        #expect(error?.isRetryable == true && error?.retryAfter == .seconds(3))
    }

    @Test func deviceAuthorization() async throws {
        let idp = try LoopbackServer { _ in
            .json(200, #"{"device_code":"dc","user_code":"ABCD-EFGH","verification_url":"https://www.google.com/device","expires_in":1800,"interval":5}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let authorization = try await requestDeviceAuthorization(
            DeviceAuthorizationRequest(endpoint: idp.url + "/device/code", clientAuthentication: .clientSecretPost(id: "cid", secret: "cs"),
                                       scope: "email"),
            client: client, options: options, now: now)
        #expect(authorization.userCode == "ABCD-EFGH" && authorization.verificationURI == "https://www.google.com/device")
        #expect(idp.requests.first?.bodyText == "scope=email&client_id=cid&client_secret=cs")
    }
}
