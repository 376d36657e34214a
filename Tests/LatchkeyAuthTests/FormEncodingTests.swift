import Testing
@testable import LatchkeyAuth

@Suite struct FormEncodingTests {
    @Test func serializesAsTheWHATWGUrlencodedSerializer() {
        #expect(FormEncoding.encode("AZaz09*-._") == "AZaz09*-._")
        #expect(FormEncoding.encode("a b+c") == "a+b%2Bc")
        #expect(FormEncoding.encode("~!'()&=/:?#") == "%7E%21%27%28%29%26%3D%2F%3A%3F%23")
        #expect(FormEncoding.encode("é€\n") == "%C3%A9%E2%82%AC%0A")
        #expect(FormEncoding.encode([("grant_type", "password"), ("username", "john doe"), ("password", "p&ss=1")])
            == "grant_type=password&username=john+doe&password=p%26ss%3D1")
        #expect(FormEncoding.encode([(String, String)]()) == "")
    }

    /// A value in a URL's path: a space is `%20` there, `+` a plus.
    @Test func percentEncodesForAPath() {
        #expect(FormEncoding.percentEncode("a b+c/d") == "a%20b%2Bc%2Fd")
        #expect(FormEncoding.percentEncode("AZaz09*-._") == "AZaz09*-._")
    }

    @Test func parsesPairsInOrderWithDuplicatesAndOddities() {
        let pairs = FormEncoding.decode("a=1&b=x+y&a=2&&c&d=&%3D=%3d%zz%4&e=%C3%A9")
        #expect(pairs.map(\.0) == ["a", "b", "a", "c", "d", "=", "e"])
        #expect(pairs.map(\.1) == ["1", "x y", "2", "", "", "=%zz%4", "é"])
        #expect(FormEncoding.decode("").isEmpty)
        #expect(FormEncoding.decode("x=%FF").first?.1 == "\u{FFFD}")
    }

    @Test func roundTrips() {
        let pairs = [("redirect_uri", "https://client.example.com/cb?x=1&y=2"), ("scope", "openid profile"), ("ü", "~*")]
        let decoded = FormEncoding.decode(FormEncoding.encode(pairs))
        #expect(decoded.map(\.0) == pairs.map(\.0))
        #expect(decoded.map(\.1) == pairs.map(\.1))
    }

    /// RFC 6749 §4.1.3's example encodes `.` as `%2E`; any parser reads it the same.
    @Test func readsTheRFCsOwnEncoding() {
        #expect(FormEncoding.decode("redirect_uri=https%3A%2F%2Fclient%2Eexample%2Ecom%2Fcb").first?.1 == "https://client.example.com/cb")
    }
}
