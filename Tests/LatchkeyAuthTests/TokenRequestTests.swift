import LatchkeyHTTP
import Synchronization
import LatchkeyUpstream
import Testing
@testable import LatchkeyAuth

/// Token, device and revocation requests against the examples of their RFCs.
@Suite struct TokenRequestTests {
    private let endpoint = "https://server.example.com/token"
    private let basic = ClientAuthentication.clientSecretBasic(id: "s6BhdRkqt3", secret: "7Fjfp0ZBr1KtDRbnfVdmIw")

    private func body(_ request: AuthHTTPRequest) -> String { String(decoding: request.body, as: UTF8.self) }

    private func build(_ grant: TokenGrant, _ auth: ClientAuthentication? = nil, scope: String? = nil) throws -> AuthHTTPRequest {
        try TokenRequest(endpoint: endpoint, grant: grant, clientAuthentication: auth, scope: scope).httpRequest(options: UpstreamOptions())
    }

    /// RFC 6749 §2.3.1 and §4.3.2.
    @Test func passwordGrantWithBasicClientAuthentication() throws {
        let request = try build(.password(username: "johndoe", password: "A3ddj3w"), basic)
        #expect(request.method == "POST")
        #expect(request.url == endpoint)
        #expect(request.fields["Authorization"] == "Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3")
        #expect(request.fields["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.fields["Accept"] == "application/json")
        #expect(body(request) == "grant_type=password&username=johndoe&password=A3ddj3w")
    }

    /// RFC 6749 §2.3.1: id and secret are form-encoded before base64.
    @Test func basicFormEncodesIdAndSecret() throws {
        let request = try build(.clientCredentials, .clientSecretBasic(id: "my client", secret: "a:b+c/é"))
        let credentials = request.fields["Authorization"].map { String($0.dropFirst("Basic ".count)) }
        #expect(credentials.flatMap(Base64URL.decode).map { String(decoding: $0, as: UTF8.self) } == "my+client:a%3Ab%2Bc%2F%C3%A9")
    }

    /// RFC 6749 §4.4.2 and §6.
    @Test func clientCredentialsAndRefresh() throws {
        #expect(try body(build(.clientCredentials, basic)) == "grant_type=client_credentials")
        #expect(try body(build(.refreshToken("tGzv3JOkF0XG5Qx2TlKWIA"), basic)) == "grant_type=refresh_token&refresh_token=tGzv3JOkF0XG5Qx2TlKWIA")
    }

    @Test func scopeIsNotSentWithARefreshUnlessAsked() throws {
        #expect(try body(build(.refreshToken("r"), scope: "read")) == "grant_type=refresh_token&refresh_token=r")
        var request = TokenRequest(endpoint: endpoint, grant: .refreshToken("r"), clientAuthentication: nil, scope: "read write")
        request.sendsScopeOnRefresh = true
        #expect(try body(request.httpRequest(options: UpstreamOptions())) == "grant_type=refresh_token&refresh_token=r&scope=read+write")
        #expect(try body(build(.clientCredentials, scope: "read write")) == "grant_type=client_credentials&scope=read+write")
    }

    @Test func postAndNoneClientAuthenticationGoInTheForm() throws {
        let post = try build(.clientCredentials, .clientSecretPost(id: "cid", secret: "s&cret"))
        #expect(body(post) == "grant_type=client_credentials&client_id=cid&client_secret=s%26cret")
        #expect(post.fields["Authorization"] == nil)
        #expect(try body(build(.refreshToken("r"), .none(id: "cid"))) == "grant_type=refresh_token&refresh_token=r&client_id=cid")
    }

    /// RFC 7523 §2.2: a fresh assertion for each request.
    @Test func privateKeyJWTAddsAFreshAssertion() throws {
        let counter = Counter()
        let auth = ClientAuthentication.privateKeyJWT(id: "cid") { "jwt\(counter.next())" }
        #expect(try body(build(.clientCredentials, auth)) == "grant_type=client_credentials&client_id=cid"
            + "&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=jwt1")
        #expect(try body(build(.clientCredentials, auth)).hasSuffix("client_assertion=jwt2"))
    }

    @Test func aFailingSignerIsAnErrorWithItsReason() {
        struct NoKey: Error, CustomStringConvertible { var description: String { "key file unreadable" } }
        let auth = ClientAuthentication.privateKeyJWT(id: "cid") { throw NoKey() }
        #expect(throws: TokenEndpointError.clientAssertionFailed("key file unreadable")) { try build(.clientCredentials, auth) }
    }

    /// Podio: "authenticate as app".
    @Test func customGrant() throws {
        let request = try build(.custom(grantType: "app", fields: [("app_id", "123"), ("app_token", "t0k")]),
                                .clientSecretPost(id: "podio-client", secret: "ps"))
        #expect(body(request) == "grant_type=app&app_id=123&app_token=t0k&client_id=podio-client&client_secret=ps")
    }

    /// RFC 6749 §4.1.3 with RFC 7636 §4.5.
    @Test func authorizationCodeWithVerifier() throws {
        let request = try build(
            .authorizationCode(code: "SplxlOBeZQQYbYS6WxSbIA", redirectURI: "https://client.example.com/cb",
                               codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), .none(id: "s6BhdRkqt3"))
        #expect(body(request) == "grant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA"
            + "&redirect_uri=https%3A%2F%2Fclient.example.com%2Fcb&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&client_id=s6BhdRkqt3")
    }

    /// RFC 8628 §3.4 and RFC 7523 §2.1.
    @Test func deviceCodeAndJWTBearer() throws {
        #expect(try body(build(.deviceCode("GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS"), .none(id: "1406020730")))
            == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code"
            + "&device_code=GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS&client_id=1406020730")
        #expect(try body(build(.jwtBearer(assertion: "eyJhbGciOiJFUzI1NiIsImtpZCI6IjE2In0.eyJpc3Mi.sig")))
            == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=eyJhbGciOiJFUzI1NiIsImtpZCI6IjE2In0.eyJpc3Mi.sig")
    }

    /// RFC 8693 §2.3's example, with its `resource`, and the optional fields.
    @Test func tokenExchange() throws {
        let request = TokenRequest(
            endpoint: endpoint,
            grant: .tokenExchange(subjectToken: "accVkjcJyb4BWCxGsndESCJQbdFMogUC5PbRDqceLTC",
                                  subjectTokenType: "urn:ietf:params:oauth:token-type:access_token"),
            clientAuthentication: nil, resources: ["https://backend.example.com/api"]
        )
        #expect(try body(request.httpRequest(options: UpstreamOptions()))
            == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            + "&subject_token=accVkjcJyb4BWCxGsndESCJQbdFMogUC5PbRDqceLTC"
            + "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
            + "&resource=https%3A%2F%2Fbackend.example.com%2Fapi")
        let full = try build(.tokenExchange(subjectToken: "s", subjectTokenType: "st", requestedTokenType: "rt",
                                            actorToken: "a", actorTokenType: "at"))
        #expect(body(full) == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            + "&subject_token=s&subject_token_type=st&requested_token_type=rt&actor_token=a&actor_token_type=at")
    }

    @Test func audienceResourcesAndExtraFieldsComeAfterTheGrant() throws {
        let request = TokenRequest(
            endpoint: endpoint, grant: .clientCredentials, clientAuthentication: .clientSecretPost(id: "c", secret: "s"),
            scope: "a b", audience: "https://api.example.com", resources: ["r1", "r2"], extraFields: [("x", "1")]
        )
        #expect(try body(request.httpRequest(options: UpstreamOptions())) == "grant_type=client_credentials&scope=a+b"
            + "&audience=https%3A%2F%2Fapi.example.com&resource=r1&resource=r2&x=1&client_id=c&client_secret=s")
    }

    @Test func optionsReachTheHTTPRequest() throws {
        let options = UpstreamOptions(caFile: "/etc/idp-ca.pem", proxy: "http://proxy:3128")
        let request = try TokenRequest(endpoint: endpoint, grant: .clientCredentials, clientAuthentication: nil).httpRequest(options: options)
        #expect(request.options == options)
        #expect(request.maxResponseBytes == 1 << 20)
    }

    /// RFC 7009 §2.1.
    @Test func revocation() throws {
        let request = try TokenSubmission(endpoint: "https://server.example.com/revoke", token: "45ghiukldjahdnhzdauz",
                                            tokenTypeHint: "refresh_token", clientAuthentication: basic).httpRequest(options: UpstreamOptions())
        #expect(body(request) == "token=45ghiukldjahdnhzdauz&token_type_hint=refresh_token")
        #expect(request.fields["Authorization"] == "Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3")
    }

    /// RFC 8628 §3.1.
    @Test func deviceAuthorizationRequest() throws {
        let request = try DeviceAuthorizationRequest(endpoint: "https://server.example.com/device", clientAuthentication: .none(id: "1406020730"),
                                                     scope: "openid email").httpRequest(options: UpstreamOptions())
        #expect(body(request) == "scope=openid+email&client_id=1406020730")
        #expect(request.method == "POST")
    }
}

/// A counter the `@Sendable` assertion closures can bump.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
