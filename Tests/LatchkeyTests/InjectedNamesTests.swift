import Testing
@testable import Latchkey

@Suite struct InjectedNamesTests {
    static let names = InjectedNames(["api_key", "sess"])

    /// Spellings an upstream may read as an injected name.
    @Test(arguments: [
        "api_key", "api%5Fkey", "api%5fkey", "api%255Fkey", "%61pi_key", "api_key[]", "api_key[0]",
        "api_key[x]=", "api_key%5B%5D", " api_key", "api_key ", "+api_key", "%20api_key%09",
        "api.key", "api+key", "api key", "API_KEY", "Api_Key", "api_key%00junk", "sess", "sess ",
        "\tsess",
    ])
    func spellingsOfAnInjectedName(name: String) {
        #expect(Self.names.matches(Substring(name + "=X")))
        #expect(Self.names.matches(Substring(name)))
    }

    @Test(arguments: ["api_keys", "xapi_key", "api-key", "apikey", "api_ke", "session", "a", "", "=api_key", "%zz"])
    func otherNamesAreNotInjected(name: String) {
        #expect(!Self.names.matches(Substring(name + "=api_key")))
    }

    @Test func aConfiguredNameIsReadTheSameWay() {
        #expect(InjectedNames(["Api.Key"]).matches("api_key=X"))
    }

    @Test func partsBehindAnotherSeparatorAreRemovedAndTheRestKeptAsSent() {
        #expect(Self.names.removingMatches(from: "a=1;api_key=X;b=%20", splitAt: ";") == "a=1;b=%20")
        #expect(Self.names.removingMatches(from: "api_key=X;api%5Fkey=Y", splitAt: ";") == nil)
        #expect(Self.names.removingMatches(from: "a=1;;b", splitAt: ";") == "a=1;;b")
        #expect(Self.names.removingMatches(from: "api_key=X", splitAt: ";") == nil)
        #expect(Self.names.removingMatches(from: "q=a%3Bb", splitAt: ";") == "q=a%3Bb")
        #expect(Self.names.removingMatches(from: "theme=dark, sess=X", splitAt: ",") == "theme=dark")
    }

    @Test func noNamesMatchNothing() {
        #expect(InjectedNames([]).isEmpty)
        #expect(!InjectedNames([]).matches("api_key=1"))
    }
}
