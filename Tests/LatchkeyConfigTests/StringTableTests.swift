import LatchkeyConfig
import Testing

/// A few entries are compared in turn and more are hashed: the same answers either way.
@Suite struct StringTableTests {
    @Test(arguments: [0, 1, 8, 9, 40])
    func findsEveryKeyAndNothingElse(count: Int) {
        let entries = Dictionary(uniqueKeysWithValues: (0..<count).map { ("name-\($0)", "value \($0)") })
        let table = StringTable(entries)
        for (key, value) in entries {
            #expect(table[key] == value)
            #expect(table.contains(key))
        }
        for absent in ["name-\(count)", "NAME-0", "name-0 ", ""] {
            #expect(table[absent] == nil, "\(absent)")
        }
    }

    @Test func aLongKeyIsComparedWhole() {
        let long = String(repeating: "k", count: 40)
        let table = StringTable([long: 1, long + "x": 2])
        #expect(table[long] == 1 && table[long + "x"] == 2 && table[String(long.dropLast())] == nil)
    }
}
