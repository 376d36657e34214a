/// The fields of a header or trailer section: ordered, duplicates kept.
///
/// A proxy must forward what it received: folding duplicates into a dictionary loses
/// `Set-Cookie` lines and hides the duplicate `Content-Length` or `Host` lines that request
/// smuggling relies on. Lookups match names ASCII case-insensitively (RFC 9110 §5.1).
///
/// Kept as nginx keeps a head: the bytes of the field lines, each written once as
/// `name: value\r\n`, and an index of the lines with each name recognised when it is stored
/// (`FieldName`). A field parsed from a message is never a `String` unless someone asks for
/// its value; looking up a known name compares one byte per field; removing a field drops
/// its index entry and leaves its bytes; and a section goes out as runs of the stored lines
/// (`FieldSectionEncoder`), one copy for a head forwarded without change. As a `String`
/// per name and value, a proxied request built, retained, compared and encoded about forty
/// of them.
///
/// Eager-move, as `Array` is: a value no longer used may end where its last use is, so a
/// section passed on (a response head from the transfer to the proxy) is the only holder
/// of its buffer and is edited in place. Its buffer is a class with a deinit, which would
/// otherwise keep every copy alive to the end of its scope and make each edit copy it.
@_eagerMove
public struct HTTPFields: Sendable {
    public typealias Name = HTTPField.Name

    /// The fields in order (where each one's line is, and what is known of it), and the
    /// lines, `name: value\r\n`, in the order they were written (`Storage`); nil while
    /// there are none. A removed or replaced field's line stays until
    /// `compactIfMostlyDead` drops the dead bytes. Safe to send as an array's buffer is
    /// (ManagedBuffer is not Sendable): a buffer more than one value holds is only read.
    @usableFromInline nonisolated(unsafe) var storage: Storage?
    /// Bytes of the lines no entry points at.
    @usableFromInline var deadBytes: Int
    /// The known names of the fields stored, a bit each (`FieldName.bit`): a lookup of a
    /// name that is not among them walks no entries, which most lookups were. A removed
    /// field's bit may stay.
    @usableFromInline var knownNames: UInt32

    @usableFromInline
    struct Entry: Sendable {
        var start: UInt32
        var nameCount: UInt32
        var valueStart: UInt32
        var valueCount: UInt32
        var name: FieldName
        /// Stored as `name: value\r\n`, with a token name and a value without control
        /// bytes but HTAB: the line is sent as it is stored.
        var sendsAsStored: Bool

        var nameRange: Range<Int> { Int(start)..<(Int(start) + Int(nameCount)) }
        var valueRange: Range<Int> { Int(valueStart)..<(Int(valueStart) + Int(valueCount)) }
        /// The line from its name to the CRLF after its value; to the value's end for a line
        /// not sent as stored, which is written anew from its name and value (and may have
        /// ended in spaces, or in a bare LF, in the bytes it came in).
        var lineRange: Range<Int> { Int(start)..<(Int(valueStart) + Int(valueCount) + (sendsAsStored ? 2 : 0)) }
    }

    /// Where a parsed section's bytes were copied to in `lines`.
    struct StoredSection {
        /// Added to a position in the parser's buffer to make it one in `lines`.
        let offset: Int
    }

    public init() {
        storage = nil
        deadBytes = 0
        knownNames = 0
    }

    public init(_ fields: some Sequence<HTTPField>) {
        self.init()
        for field in fields { append(field) }
    }

    /// Room for `minimumCapacity` fields in all, and for the lines of those not yet stored.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        let more = minimumCapacity - entryCount
        guard more > 0 else { return }
        makeRoom(entries: more, lines: more * 32)
    }

    public mutating func append(name: String, value: String) {
        append(name: Name(name), value: value)
    }

    public mutating func append(name: Name, value: String) {
        name.withBytes { name, known in addEntry(storeLine(name: name, known, value: value)) }
    }

    public mutating func append(_ field: HTTPField) {
        append(name: field.name, value: field.value)
    }

    /// Copies the bytes of a parsed section (`region` of `bytes`: its field lines) in one
    /// piece; `indexParsed` then indexes its fields.
    mutating func storeSection(_ bytes: UnsafeRawBufferPointer, _ region: Range<Int>, fields: Int) -> StoredSection {
        // A new section's buffer, as a head's is, is made to size: room for its fields
        // and its lines in one allocation.
        makeRoom(entries: fields, lines: region.count)
        let start = appendLines(UnsafeRawBufferPointer(rebasing: bytes[region]))
        return StoredSection(offset: start - region.lowerBound)
    }

    /// A field of a stored section whose name and value the parser has located and checked:
    /// a token name, a value of field-value bytes. `asWritten`: its line is `name: value`
    /// and CRLF, as the encoder would write it.
    mutating func indexParsed(_ section: StoredSection, name: Range<Int>, value: Range<Int>, known: FieldName,
                              asWritten: Bool) {
        addParsedEntry(Entry(start: UInt32(name.lowerBound + section.offset), nameCount: UInt32(name.count),
                             valueStart: UInt32(value.lowerBound + section.offset), valueCount: UInt32(value.count),
                             name: known, sendsAsStored: asWritten))
    }

    /// `addEntry` for the fields of a section being parsed, whose buffer `storeSection` made
    /// this value's alone and no copy has shared since: only the room is asked about, not
    /// the runtime about uniqueness, once per line.
    @inline(__always)
    private mutating func addParsedEntry(_ entry: Entry) {
        guard storage.unsafelyUnwrapped.hasRoom(entries: 1, lines: 0) else { return addEntry(entry) }
        storage.unsafelyUnwrapped.appendEntry(entry)
        knownNames |= entry.name.bit
    }

    /// Stores a line whose value comes from a string: checked here for what the encoder
    /// must leave out or change (`Entry.sendsAsStored`).
    private mutating func storeLine(name: UnsafeRawBufferPointer, _ known: FieldName, value: String) -> Entry {
        var value = value
        return value.withUTF8 { value in
            let value = UnsafeRawBufferPointer(value)
            // A name that classifies as known is one of those tokens, whatever its case.
            let isClean = (known != .other || (!name.isEmpty && name.allSatisfy(ASCII.isTokenByte)))
                && ASCII.isFieldValue(value)
            return storeLine(name: name, value: value, known: known, isClean: isClean)
        }
    }

    /// Writes `name: value\r\n` at the end of `lines`; returns its entry.
    private mutating func storeLine(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, known: FieldName,
                                    isClean: Bool) -> Entry {
        let start = appendLines(count: name.count + value.count + 4) { line in
            line.copyMemory(from: name)
            line[name.count] = ASCII.colon
            line[name.count + 1] = ASCII.sp
            UnsafeMutableRawBufferPointer(rebasing: line[(name.count + 2)...]).copyMemory(from: value)
            line[line.count - 2] = ASCII.cr
            line[line.count - 1] = ASCII.lf
        }
        return Entry(start: UInt32(start), nameCount: UInt32(name.count), valueStart: UInt32(start + name.count + 2),
                     valueCount: UInt32(value.count), name: known, sendsAsStored: isClean)
    }

    /// Puts `entry`, whose line is stored, at `index`; the line it replaces is dead.
    private mutating func replaceEntry(at index: Int, with entry: Entry) {
        deadBytes += self.entry(at: index).lineRange.count
        setEntry(entry, at: index)
        knownNames |= entry.name.bit
        compactIfMostlyDead()
    }

    /// The first value of the field `name`, or nil.
    public subscript(name: Name) -> String? {
        firstIndex(named: name).map { value(at: $0) }
    }

    /// Every value of the field `name`, in order of arrival.
    public func values(named name: Name) -> [String] {
        var values: [String] = []
        var next = 0
        while let index = firstIndex(named: name, from: next) {
            values.append(value(at: index))
            next = index + 1
        }
        return values
    }

    public func contains(_ name: Name) -> Bool {
        firstIndex(named: name) != nil
    }

    /// The position of the first field `name` at or after `start`, or nil.
    public func firstIndex(named name: Name, from start: Int = 0) -> Int? {
        if name.known != .other { return firstIndex(named: UnsafeRawBufferPointer(start: nil, count: 0), name.known, from: start) }
        return name.withBytes { firstIndex(named: $0, $1, from: start) }
    }

    /// A known name is found by its `FieldName`; any other by its bytes, among the fields
    /// whose names are not known and have its length.
    func firstIndex(named name: UnsafeRawBufferPointer, _ known: FieldName, from start: Int) -> Int? {
        var index = start
        if known != .other {
            guard knownNames & known.bit != 0 else { return nil }
            while index < entryCount {
                if entry(at: index).name == known { return index }
                index += 1
            }
            return nil
        }
        return withLines { lines in
            while index < entryCount {
                if Self.entry(entry(at: index), in: lines, isNamed: name, known) { return index }
                index += 1
            }
            return nil
        }
    }

    @inline(__always)
    static func entry(_ entry: Entry, in lines: UnsafeRawBufferPointer, isNamed name: UnsafeRawBufferPointer,
                      _ known: FieldName) -> Bool {
        guard entry.name == known else { return false }
        guard known == .other else { return true }
        return Int(entry.nameCount) == name.count
            && ASCII.equalsCaseInsensitive(UnsafeRawBufferPointer(rebasing: lines[entry.nameRange]), name)
    }

    /// The value of the field at `index`. A value an upstream sent as obs-text that is not
    /// UTF-8 has its invalid bytes replaced here; the stored line keeps them and is
    /// forwarded as it came.
    public func value(at index: Int) -> String {
        let range = entry(at: index).valueRange
        return withLines { ASCII.string($0, range) }
    }

    public func name(at index: Int) -> String {
        let range = entry(at: index).nameRange
        return withLines { ASCII.string($0, range) }
    }

    /// Calls `body` with the stored bytes of each value of `known`, in order, until it
    /// returns false. Inlined, with the caller's handling of each value: called, a
    /// proxied response cost some 40 instructions more.
    @inline(__always)
    func forEachValue<E: Error>(of known: FieldName, _ body: (UnsafeRawBufferPointer) throws(E) -> Bool) throws(E) {
        guard knownNames & known.bit != 0 else { return }
        try withLines { (lines) throws(E) in
            for index in 0..<entryCount {
                let entry = entry(at: index)
                guard entry.name == known else { continue }
                guard try body(UnsafeRawBufferPointer(rebasing: lines[entry.valueRange])) else { return }
            }
        }
    }

    public mutating func removeAll(named name: Name) {
        name.withBytes { removeAll(named: $0, $1) }
    }

    mutating func removeAll(named name: UnsafeRawBufferPointer, _ known: FieldName) {
        // Nothing to remove (the usual case): no pass that may copy the storage.
        guard firstIndex(named: name, known, from: 0) != nil else { return }
        removeEntries { entry, lines in Self.entry(entry, in: lines, isNamed: name, known) }
    }

    /// Removes the fields `shouldBeRemoved` picks, judged on their index entries and the
    /// stored lines: no field is made into strings. Inlined, so that the judgement is too:
    /// called through the closure it cost more than the pass.
    @inline(__always)
    mutating func removeEntries(from start: Int = 0, where shouldBeRemoved: (Entry, UnsafeRawBufferPointer) -> Bool) {
        guard start < entryCount else { return }
        makeRoom(entries: 0, lines: 0)
        let storage = storage.unsafelyUnwrapped
        var kept = start
        storage.withLines { lines in
            let lines = UnsafeRawBufferPointer(lines)
            for index in start..<storage.entryCount {
                let entry = storage.entry(at: index)
                if shouldBeRemoved(entry, lines) {
                    deadBytes += entry.lineRange.count
                } else {
                    // Those before the first removed one stay where they are.
                    if kept != index { storage.setEntry(entry, at: kept) }
                    kept += 1
                }
            }
        }
        storage.entryCount = kept
        compactIfMostlyDead()
    }

    /// Replaces every `name` line with one `name: value` line, kept where the first one was
    /// (appended when there was none), so the order of the other fields does not change.
    public mutating func set(name: Name, value: String) {
        name.withBytes { name, known in put(storeLine(name: name, known, value: value), named: name, known) }
    }

    /// Puts `entry`, whose line is stored, in the place of the first field `name` (at the
    /// end when there is none) and removes the others: `set`'s edit, whatever made the line.
    mutating func put(_ entry: Entry, named name: UnsafeRawBufferPointer, _ known: FieldName) {
        guard let first = firstIndex(named: name, known, from: 0) else {
            addEntry(entry)
            return
        }
        replaceEntry(at: first, with: entry)
        guard firstIndex(named: name, known, from: first + 1) != nil else { return }
        removeEntries(from: first + 1) { entry, lines in Self.entry(entry, in: lines, isNamed: name, known) }
    }

    /// Drops the bytes of removed and replaced fields once they are most of what is kept,
    /// so that a section edited over and over does not grow without bound.
    @usableFromInline
    mutating func compactIfMostlyDead() {
        guard deadBytes > 1024, deadBytes > lineCount / 2 else { return }
        var compacted = HTTPFields()
        compacted.makeRoom(entries: entryCount, lines: lineCount - deadBytes)
        withLines { lines in
            for index in 0..<entryCount {
                let entry = entry(at: index)
                var moved = entry
                moved.start = UInt32(compacted.appendLines(UnsafeRawBufferPointer(rebasing: lines[entry.lineRange])))
                moved.valueStart = moved.start + (entry.valueStart - entry.start)
                compacted.addEntry(moved)
            }
        }
        self = compacted
    }
}

extension HTTPFields: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Element = HTTPField

    public var startIndex: Int { 0 }
    public var endIndex: Int { entryCount }

    /// The field at `position` as strings; setting it stores a new line in its place.
    public subscript(position: Int) -> HTTPField {
        get { HTTPField(name: name(at: position), value: value(at: position)) }
        set {
            Name(newValue.name).withBytes { name, known in
                replaceEntry(at: position, with: storeLine(name: name, known, value: newValue.value))
            }
        }
    }
}

extension HTTPFields: Equatable, Hashable {
    /// The same names, spelled the same, with the same values, in the same order.
    public static func == (lhs: HTTPFields, rhs: HTTPFields) -> Bool {
        guard lhs.entryCount == rhs.entryCount else { return false }
        return lhs.withLines { left in
            rhs.withLines { right in
                (0..<lhs.entryCount).allSatisfy { index in
                    let (l, r) = (lhs.entry(at: index), rhs.entry(at: index))
                    return l.nameCount == r.nameCount && l.valueCount == r.valueCount
                        && left[l.nameRange].elementsEqual(right[r.nameRange])
                        && left[l.valueRange].elementsEqual(right[r.valueRange])
                }
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entryCount)
        withLines { lines in
            for entry in (0..<entryCount).lazy.map(entry(at:)) {
                hasher.combine(entry.nameCount)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: lines[entry.nameRange]))
                hasher.combine(entry.valueCount)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: lines[entry.valueRange]))
            }
        }
    }
}

extension HTTPFields: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: HTTPField...) {
        self.init(elements)
    }
}

/// `["Host": "example.com", "Accept": "*/*"]`: a dictionary literal keeps its order and its
/// duplicates, which is what a field section is.
extension HTTPFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        for (name, value) in elements { append(name: Name(name), value: value) }
    }
}

extension HTTPFields: CustomStringConvertible {
    /// Names only, like `HTTPField.description`: values may be credentials.
    public var description: String {
        "[" + indices.map { name(at: $0) }.joined(separator: ", ") + "]"
    }
}
