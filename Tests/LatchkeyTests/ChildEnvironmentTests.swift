import Testing
@testable import Latchkey

/// What `latchkey exec` gives its command: exec's variables replace the parent's in any
/// case, secrets the configuration reads from the environment are withheld, and
/// `--print-env` masks the proxy password.
struct ChildEnvironmentTests {
    let child = ChildEnvironment(proxyURL: "http://latchkey:pw@127.0.0.1:4000", reverseURL: "http://127.0.0.1:4001",
                                 bundlePath: "/s/ca/bundle.pem", caPath: "/s/ca/ca.pem", withheld: ["API_TOKEN", "LATCHKEY_STORE_KEY"])

    @Test func setsTheProxyNoProxyAndTrustVariables() {
        let variables = child.variables(inheriting: [:])
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] { #expect(variables[name] == "http://latchkey:pw@127.0.0.1:4000") }
        #expect(variables["NO_PROXY"] == "localhost,127.0.0.1,::1" && variables["no_proxy"] == "localhost,127.0.0.1,::1")
        for name in ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT"] {
            #expect(variables[name] == "/s/ca/bundle.pem")
        }
        #expect(variables["NODE_EXTRA_CA_CERTS"] == "/s/ca/ca.pem")
        #expect(variables["NODE_USE_ENV_PROXY"] == "1")
        #expect(variables["LATCHKEY_URL"] == "http://127.0.0.1:4001")
    }

    @Test func theParentsCopiesAreReplacedWhateverTheirCaseAndSecretsWithheld() {
        let parent = ["Https_Proxy": "http://corp:3128", "ssl_cert_file": "/old", "LATCHKEY_URL": "http://old", "API_TOKEN": "t0k",
                      "LATCHKEY_STORE_KEY": "k3y", "PATH": "/usr/bin", "HOME": "/home/u"]
        let variables = child.variables(inheriting: parent)
        #expect(variables["Https_Proxy"] == nil && variables["ssl_cert_file"] == nil)
        #expect(variables["API_TOKEN"] == nil && variables["LATCHKEY_STORE_KEY"] == nil)
        #expect(variables["PATH"] == "/usr/bin" && variables["HOME"] == "/home/u")
        #expect(variables["LATCHKEY_URL"] == "http://127.0.0.1:4001")
        #expect(!variables.values.contains("t0k") && !variables.values.contains("k3y"))
    }

    @Test func withoutAReverseListenerThereIsNoLatchkeyURL() {
        let forwardOnly = ChildEnvironment(proxyURL: "http://latchkey:pw@127.0.0.1:4000", reverseURL: nil, bundlePath: "/b", caPath: "/c",
                                           withheld: [])
        #expect(forwardOnly.variables(inheriting: ["LATCHKEY_URL": "http://stale"])["LATCHKEY_URL"] == nil)
    }

    @Test func printingMasksThePassword() {
        let lines = child.printed(masking: "pw")
        #expect(lines.first == "HTTPS_PROXY=http://latchkey:****@127.0.0.1:4000")
        #expect(!lines.contains { $0.contains(":pw@") })
        #expect(lines.count == child.settings.count)
    }
}
