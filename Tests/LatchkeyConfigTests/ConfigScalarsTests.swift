import Testing
@testable import LatchkeyConfig

@Suite("Config scalars")
struct ConfigScalarsTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)),
        ("5s", .seconds(5)),
        ("2m", .seconds(120)),
        ("1h", .seconds(3600)),
        ("1m30s", .seconds(90)),
        ("1.5s", .milliseconds(1500)),
        ("0.25h", .seconds(900)),
        ("30d", .seconds(30 * 86400)),
        ("1d12h", .seconds(36 * 3600)),
        ("250us", .microseconds(250)),
        ("30", .seconds(30)),
        ("0", .zero),
        (" 10s ", .seconds(10)),
    ])
    func durations(_ text: String, _ expected: Duration) {
        #expect(ConfigScalars.duration(text) == expected)
    }

    @Test(arguments: ["", "s", "5", "-5s", "5 s", "5sec", "1.s", "5x", "1e3s", "99999999999999999999h", "5s5"])
    func invalidDurations(_ text: String) {
        if text == "5" { return }  // bare integers are seconds
        #expect(ConfigScalars.duration(text) == nil, "\(text)")
    }

    @Test(arguments: [
        ("8192", 8192),
        ("64KiB", 65536),
        ("64k", 65536),
        ("10MiB", 10 * 1024 * 1024),
        ("1GiB", 1 << 30),
        ("64KB", 64000),
        ("10MB", 10_000_000),
        ("1GB", 1_000_000_000),
        ("100B", 100),
    ] as [(String, UInt64)])
    func sizes(_ text: String, _ expected: UInt64) {
        #expect(ConfigScalars.byteSize(text) == expected)
    }

    @Test(arguments: ["", "KiB", "-1", "1.5MiB", "10 parsecs", "99999999999999999999GiB"])
    func invalidSizes(_ text: String) {
        #expect(ConfigScalars.byteSize(text) == nil)
    }
}
