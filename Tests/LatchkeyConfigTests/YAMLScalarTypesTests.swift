import Testing
@testable import LatchkeyConfig

@Suite("YAML scalar types")
struct YAMLScalarTypesTests {
    private func plain(_ text: String) -> YAMLScalar { YAMLScalar(text: text, quoted: false, tag: nil) }

    @Test(arguments: [
        ("3", YAMLScalarType.int), ("-17", .int), ("+0", .int), ("0x1F", .int), ("0b101", .int), ("017", .int),
        ("0o17", .int), ("1_000", .int), ("1:30", .int),
        ("1.5", .float), ("1e3", .float), ("-2.5E-3", .float), (".5", .float), (".inf", .float), ("-.Inf", .float),
        (".NaN", .float), ("1:30.5", .float),
        ("yes", .bool), ("No", .bool), ("TRUE", .bool), ("off", .bool),
        ("", .null), ("~", .null), ("null", .null), ("NULL", .null),
        ("hello", .string), ("2024-01-02", .string), ("<<", .string), ("=", .string), ("tRue", .string), ("0x", .string),
        ("1.2.3", .string), ("nil", .string),
    ])
    func aPlainScalarIsTypedByItsLook(text: String, type: YAMLScalarType) {
        #expect(plain(text).type == type, "\(text)")
    }

    @Test func quotesAndTagsDecideTheType() {
        #expect(YAMLScalar(text: "3", quoted: true, tag: nil).type == .string)
        #expect(YAMLScalar(text: "3", quoted: false, tag: "tag:yaml.org,2002:str").type == .string)
        #expect(YAMLScalar(text: "3", quoted: true, tag: "tag:yaml.org,2002:int").type == .int)
        #expect(YAMLScalar(text: "x", quoted: false, tag: "!custom").type == .string)
        #expect(YAMLScalar(text: "", quoted: false, tag: "tag:yaml.org,2002:null").isNull)
        #expect(!YAMLScalar(text: "null", quoted: true, tag: nil).isNull)
        #expect(!YAMLScalar(text: "~", quoted: false, tag: "tag:yaml.org,2002:str").isNull)
    }

    @Test(arguments: [
        ("8080", 8080), ("-17", -17), ("+5", 5), ("0", 0), ("0x1F", 31), ("-0x1f", -31), ("0b101", 5), ("017", 15),
        ("0o17", 15), ("1_000", 1000), ("1:30", 90), ("-1:30", -90), ("1:00:00", 3600),
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
    ])
    func integersReadAsYAML11Has(text: String, value: Int) {
        #expect(plain(text).int == value, "\(text)")
    }

    @Test(arguments: ["08", "0x", "1.5", "abc", "", "9223372036854775808", "999999999999999999:0", "1:", "--5", "1e3",
                      "-+5", "++5", "0x-5", "0b+1", "1:-5", "+-1:30", "0o-7"])
    func whatIsNotAnIntegerReadsAsNone(text: String) {
        #expect(plain(text).int == nil, "\(text)")
    }

    @Test func aQuotedNumberIsNotAnInteger() {
        #expect(YAMLScalar(text: "8080", quoted: true, tag: nil).int == nil)
        #expect(YAMLScalar(text: "8080", quoted: false, tag: "tag:yaml.org,2002:str").int == nil)
        #expect(YAMLScalar(text: "8080", quoted: false, tag: "tag:yaml.org,2002:int").int == 8080)
        // A tag decides, quoted or not.
        #expect(YAMLScalar(text: "8080", quoted: true, tag: "tag:yaml.org,2002:int").int == 8080)
    }

    @Test func booleansAreTheWordsOfYAML11InAnyCase() {
        for word in ["true", "True", "yes", "YES", "on", "On"] { #expect(plain(word).bool == true, "\(word)") }
        for word in ["false", "FALSE", "no", "No", "off", "OFF"] { #expect(plain(word).bool == false, "\(word)") }
        for word in ["1", "y", "enabled", ""] { #expect(plain(word).bool == nil, "\(word)") }
        #expect(YAMLScalar(text: "true", quoted: true, tag: nil).bool == nil)
    }

    @Test func floatsIncludeInfinitiesAndBase60() {
        #expect(plain("1.5").double == 1.5)
        #expect(plain("1_000.25").double == 1000.25)
        #expect(plain("-2.5e-3").double == -0.0025)
        #expect(plain(".inf").double == .infinity)
        #expect(plain("-.INF").double == -.infinity)
        #expect(plain(".nan").double?.isNaN == true)
        #expect(plain("1:30.5").double == 90.5)
        #expect(YAMLScalar(text: "1.5", quoted: true, tag: nil).double == nil)
        #expect(YAMLScalar(text: "1.5", quoted: true, tag: "tag:yaml.org,2002:float").double == 1.5)
        #expect(plain("1:-30.5").double == nil)
        #expect(plain("--1.5").double == nil)
    }
}
