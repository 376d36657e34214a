import Testing
@testable import LatchkeyConfig

@Suite("YAML composer")
struct YAMLComposerTests {
    private func compose(_ text: String) throws(YAMLSyntaxError) -> YAMLNode {
        try YAMLComposer.compose(text)
    }

    private func error(_ text: String) -> YAMLSyntaxError? {
        do throws(YAMLSyntaxError) {
            _ = try compose(text)
            return nil
        } catch {
            return error
        }
    }

    private func mapping(_ node: YAMLNode) -> [YAMLPair]? {
        guard case .mapping(let mapping) = node.content else { return nil }
        return mapping
    }

    private func text(_ node: YAMLNode) -> String? {
        guard case .scalar(let scalar) = node.content else { return nil }
        return scalar.text
    }

    @Test func aMappingKeepsItsPairsInOrderWithTheirPlaces() throws {
        let root = try compose("""
            b: 1
            a:
              - x
              - "y"
            """)
        let top = try #require(mapping(root))
        #expect(top.map(\.key).compactMap(text) == ["b", "a"])
        #expect(top[1].key.mark == YAMLMark(line: 2, column: 1))
        guard case .sequence(let list) = top[1].value.content else {
            Issue.record("not a list")
            return
        }
        #expect(list.compactMap(text) == ["x", "y"])
        #expect(list[1].mark == YAMLMark(line: 4, column: 5))
        guard case .scalar(let quoted) = list[1].content, case .scalar(let plain) = list[0].content else { return }
        #expect(quoted.quoted && !plain.quoted)
    }

    @Test func anEmptyDocumentIsNull() throws {
        for empty in ["", "\n", "# only a comment\n", "---\n"] {
            let root = try compose(empty)
            guard case .scalar(let scalar) = root.content else {
                Issue.record("not a scalar: \(empty)")
                continue
            }
            #expect(scalar.isNull, "\(empty)")
        }
    }

    @Test func anAliasStandsForItsAnchoredNode() throws {
        let root = try compose("""
            base: &base {timeout: 5s}
            copy: *base
            """)
        let top = try #require(mapping(root))
        let copy = try #require(mapping(top[1].value))
        #expect(copy.map(\.key).compactMap(text) == ["timeout"])
        #expect(copy.map(\.value).compactMap(text) == ["5s"])
    }

    @Test func aLaterAnchorOfTheSameNameReplacesTheEarlier() throws {
        let root = try compose("[&a one, *a, &a two, *a]")
        guard case .sequence(let list) = root.content else { return }
        #expect(list.compactMap(text) == ["one", "one", "two", "two"])
    }

    @Test func anAliasBeforeItsAnchorIsAnError() {
        let problem = error("a: *nowhere\n")
        #expect(problem?.message == "the alias *nowhere names no anchor before it")
        #expect(problem?.mark == YAMLMark(line: 1, column: 4))
        // A node cannot hold itself.
        #expect(error("a: &self [*self]\n")?.message.hasPrefix("the alias *self") == true)
    }

    @Test func aKeyWrittenTwiceIsAnErrorAtTheSecond() {
        let problem = error("a: 1\nb: 2\n\"a\": 3\n")
        #expect(problem?.message == "duplicate key 'a' in a mapping (first at line 1)")
        #expect(problem?.mark == YAMLMark(line: 3, column: 1))
    }

    @Test func aKeyWrittenTwiceAmongManyIsFound() {
        // Past the keys searched in order, they are hashed.
        let keys = (0..<40).map { "k\($0): \($0)" }.joined(separator: "\n")
        #expect(error(keys + "\n") == nil)
        let problem = error(keys + "\nk3: again\n")
        #expect(problem?.message == "duplicate key 'k3' in a mapping (first at line 4)")
        #expect(problem?.mark?.line == 41)
        #expect(error(keys + "\nk30: again\n")?.message == "duplicate key 'k30' in a mapping (first at line 31)")
    }

    @Test func theSameKeyInDifferentMappingsIsFine() throws {
        _ = try compose("a: {x: 1}\nb: {x: 2}\n")
    }

    @Test func aSecondDocumentIsAnError() {
        let problem = error("a: 1\n---\nb: 2\n")
        #expect(problem?.message == "more than one document in the file")
        #expect(problem?.mark?.line == 2)
    }

    @Test func libyamlsProblemsKeepTheirPlaceAndContext() {
        let problem = error("routes:\n  - name: a\n    upstream: [https://example.com\nlimits: {}\n")
        #expect(problem?.mark?.line == 4)
        #expect(problem?.message.contains("while parsing a flow sequence at line 3") == true)
        #expect(error("a: b: c\n")?.mark == YAMLMark(line: 1, column: 5))
        #expect(error("a: 'unclosed\n")?.message.contains("found unexpected end of stream") == true)
    }

    @Test func aReaderProblemIsPlacedByItsOffset() {
        // A control character is refused by libyaml's reader, which gives a byte offset.
        let problem = error("a: 1\nbb: x\u{07}\n")
        #expect(problem?.message == "control characters are not allowed")
        #expect(problem?.mark == YAMLMark(line: 2, column: 6))
        // Counted in characters, as libyaml's own columns are.
        #expect(error("a: 1\né: x\u{07}\n")?.mark == YAMLMark(line: 2, column: 5))
    }

    @Test func nestingDeeperThanTheLimitIsAnErrorNotACrash() {
        let depth = YAMLComposer.maxDepth + 1
        let problem = error(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(problem?.message == "nested deeper than \(YAMLComposer.maxDepth) levels")
        let shallow = YAMLComposer.maxDepth - 1
        #expect(error(String(repeating: "[", count: shallow) + String(repeating: "]", count: shallow)) == nil)
    }

    @Test func aliasesThatStandForTooManyNodesAreAnError() {
        // Each level names the one before ten times: 10^7 nodes from a few lines. The sixth
        // line's aliases stand for about 1.2 million nodes.
        var lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...7 {
            let previous = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("a\(level): &a\(level) [\(previous)]")
        }
        let problem = error(lines.joined(separator: "\n") + "\n")
        #expect(problem?.message == "aliases stand for more than \(YAMLComposer.maxAliasedNodes) nodes in all")
        #expect(problem?.mark?.line == 6)
        // A few levels are fine.
        #expect(error(lines.prefix(3).joined(separator: "\n") + "\n") == nil)
    }

    @Test func scalarsKeepTheirTagAndUnicode() throws {
        let top = try #require(mapping(try compose("n: !!str 3\nname: \"caf\\u00e9 ☕\"\n")))
        guard case .scalar(let tagged) = top[0].value.content else { return }
        #expect(tagged.tag == "tag:yaml.org,2002:str")
        #expect(tagged.text == "3")
        #expect(text(top[1].value) == "café ☕")
    }
}
