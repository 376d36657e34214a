import Testing
import LatchkeyUpstream

/// The files and the proxy live in a shared box; each setter must still act on its own
/// field of its own copy, and equality must still be by value.
struct UpstreamOptionsTests {
    @Test func eachPathIsSetOnItsOwn() {
        var options = UpstreamOptions()
        options.caFile = "ca.pem"
        options.clientCertificateFile = "cert.pem"
        options.clientKeyFile = "key.pem"
        options.proxy = "http://proxy:3128"
        #expect(options.caFile == "ca.pem")
        #expect(options.clientCertificateFile == "cert.pem")
        #expect(options.clientKeyFile == "key.pem")
        #expect(options.proxy == "http://proxy:3128")
        #expect(options == UpstreamOptions(caFile: "ca.pem", clientCertificateFile: "cert.pem", clientKeyFile: "key.pem",
                                           proxy: "http://proxy:3128"))
    }

    @Test func aCopyKeepsItsValuesWhenTheOriginalChanges() {
        var original = UpstreamOptions(caFile: "ca.pem", proxy: "http://proxy:3128")
        let copy = original
        original.caFile = nil
        original.proxy = "socks5h://other:1080"
        #expect(copy.caFile == "ca.pem" && copy.proxy == "http://proxy:3128")
        #expect(original.caFile == nil && original.proxy == "socks5h://other:1080")
        #expect(copy != original)
    }

    @Test func equalityIsByValueWhateverTheBox() {
        var changedBack = UpstreamOptions(clientKeyFile: "key.pem")
        changedBack.clientKeyFile = nil
        #expect(changedBack == UpstreamOptions())
        #expect(UpstreamOptions(caFile: "a") == UpstreamOptions(caFile: "a"))
        #expect(UpstreamOptions(caFile: "a") != UpstreamOptions(caFile: "b"))
        #expect(UpstreamOptions(caFile: "a") != UpstreamOptions(clientCertificateFile: "a"))
        #expect(UpstreamOptions(http2: true) != UpstreamOptions())
        #expect(UpstreamOptions(idleTimeout: .seconds(1)) != UpstreamOptions())
    }
}
