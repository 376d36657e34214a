extension HTTPFields {
    /// A section's index entries and the bytes of its lines in one allocation, as nginx
    /// keeps a head in one pool: as two arrays, each head parsed cost two allocations and
    /// each copy of a section retained two buffers. Entries come first, then the lines;
    /// both are read and written as raw bytes (an entry is a trivial value), so the one
    /// buffer never holds two bound types.
    ///
    /// Copy-on-write like an array: `HTTPFields` asks for a unique buffer with room before
    /// it writes (`makeRoom`), and a shared or full one is copied to a new one.
    @usableFromInline
    final class Storage: ManagedBuffer<Storage.Header, UInt8> {
        @usableFromInline
        struct Header {
            var entryCount: Int
            var entryCapacity: Int
            var lineCount: Int
            var lineCapacity: Int
        }

        @inline(__always)
        static var entryStride: Int { MemoryLayout<Entry>.stride }

        /// The counts, read and written through the header's pointer: `header`, a class's
        /// stored property, is checked for exclusive access at run time on every use.
        @inline(__always)
        var counts: Header { withUnsafeMutablePointerToHeader { $0.pointee } }

        @inline(__always)
        var entryCount: Int {
            get { withUnsafeMutablePointerToHeader { $0.pointee.entryCount } }
            set { withUnsafeMutablePointerToHeader { $0.pointee.entryCount = newValue } }
        }

        @inline(__always)
        var lineCount: Int {
            get { withUnsafeMutablePointerToHeader { $0.pointee.lineCount } }
            set { withUnsafeMutablePointerToHeader { $0.pointee.lineCount = newValue } }
        }

        /// Whether `entries` more entries and `lines` more bytes of lines fit.
        @inline(__always)
        func hasRoom(entries: Int, lines: Int) -> Bool {
            let counts = counts
            return counts.entryCount + entries <= counts.entryCapacity && counts.lineCount + lines <= counts.lineCapacity
        }

        /// A buffer with room for `entries` entries and `lines` bytes of lines, holding the
        /// entries and lines of `source` (if any).
        static func make(entries: Int, lines: Int, copying source: Storage?) -> Storage {
            let buffer = unsafeDowncast(
                Storage.create(minimumCapacity: entries * entryStride + lines) { _ in
                    Header(entryCount: 0, entryCapacity: entries, lineCount: 0, lineCapacity: lines)
                },
                to: Storage.self)
            guard let source else { return buffer }
            let from = source.counts
            buffer.entryCount = from.entryCount
            buffer.lineCount = from.lineCount
            source.withUnsafeMutablePointerToElements { source in
                buffer.withUnsafeMutablePointerToElements { to in
                    to.update(from: source, count: from.entryCount * entryStride)
                    (to + entries * entryStride).update(from: source + from.entryCapacity * entryStride, count: from.lineCount)
                }
            }
            return buffer
        }

        @inline(__always)
        func entry(at index: Int) -> Entry {
            withUnsafeMutablePointerToElements { UnsafeRawPointer($0).load(fromByteOffset: index * Self.entryStride, as: Entry.self) }
        }

        @inline(__always)
        func setEntry(_ entry: Entry, at index: Int) {
            withUnsafeMutablePointerToElements {
                UnsafeMutableRawPointer($0).storeBytes(of: entry, toByteOffset: index * Self.entryStride, as: Entry.self)
            }
        }

        /// Appends `entry` (the caller made room).
        @inline(__always)
        func appendEntry(_ entry: Entry) {
            let index = entryCount
            setEntry(entry, at: index)
            entryCount = index + 1
        }

        /// The lines: `lineCount` bytes after the entries' room.
        @inline(__always)
        func withLines<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
            let counts = counts
            let (start, count) = (counts.entryCapacity * Self.entryStride, counts.lineCount)
            return try withUnsafeMutablePointerToElements { (elements) throws(E) -> R in
                try body(UnsafeMutableRawBufferPointer(start: elements + start, count: count))
            }
        }
    }

    /// The number of fields, removed ones not counted.
    @inline(__always)
    var entryCount: Int { storage?.entryCount ?? 0 }

    /// The bytes of the stored lines, dead ones among them.
    @inline(__always)
    var lineCount: Int { storage?.lineCount ?? 0 }

    @inline(__always)
    func entry(at index: Int) -> Entry {
        precondition(index >= 0 && index < entryCount, "field index out of range")
        return storage.unsafelyUnwrapped.entry(at: index)
    }

    /// Calls `body` with the stored lines. The buffer is reached through `storage` itself:
    /// bound to a local (`guard let`), it was retained and released around every use, some
    /// twenty times per proxied request; `self` holds it for the call anyway.
    @inline(__always)
    func withLines<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        guard storage != nil else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try storage.unsafelyUnwrapped.withLines { (lines) throws(E) -> R in try body(UnsafeRawBufferPointer(lines)) }
    }

    /// Whether any field's entry satisfies `predicate`, in order.
    @inline(__always)
    func containsEntry(where predicate: (Entry) -> Bool) -> Bool {
        for index in 0..<entryCount where predicate(entry(at: index)) { return true }
        return false
    }

    /// A unique buffer with room for `entries` more entries and `lines` more bytes of
    /// lines; grown by doubling what runs short, as an array grows.
    @inline(__always)
    mutating func makeRoom(entries: Int, lines: Int) {
        // Asked before any other reference to the buffer is taken, which would make it shared.
        if isKnownUniquelyReferenced(&storage), storage.unsafelyUnwrapped.hasRoom(entries: entries, lines: lines) { return }
        grow(entries: entries, lines: lines)
    }

    mutating func grow(entries: Int, lines: Int) {
        let counts = storage?.counts ?? Storage.Header(entryCount: 0, entryCapacity: 0, lineCount: 0, lineCapacity: 0)
        let neededEntries = counts.entryCount + entries
        let neededLines = counts.lineCount + lines
        storage = Storage.make(
            entries: neededEntries > counts.entryCapacity ? Swift.max(neededEntries, 2 * counts.entryCapacity) : counts.entryCapacity,
            lines: neededLines > counts.lineCapacity ? Swift.max(neededLines, 2 * counts.lineCapacity) : counts.lineCapacity,
            copying: storage)
    }

    /// Appends `entry`, whose line is stored.
    @inline(__always)
    mutating func addEntry(_ entry: Entry) {
        makeRoom(entries: 1, lines: 0)
        storage.unsafelyUnwrapped.appendEntry(entry)
        knownNames |= entry.name.bit
    }

    /// Replaces the entry at `index`, in a buffer of this value's alone.
    @inline(__always)
    mutating func setEntry(_ entry: Entry, at index: Int) {
        makeRoom(entries: 0, lines: 0)
        storage.unsafelyUnwrapped.setEntry(entry, at: index)
    }

    /// Writes `count` bytes at the end of the lines with `body`, which fills all of them;
    /// returns where they start.
    @inline(__always)
    mutating func appendLines(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) -> Int {
        makeRoom(entries: 0, lines: count)
        // Through `storage`, not a local that would retain it (`withLines`).
        let start = lineCount
        storage.unsafelyUnwrapped.lineCount = start + count
        storage.unsafelyUnwrapped.withLines { body(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        return start
    }

    /// Appends `bytes` to the lines; returns where they start.
    @inline(__always)
    mutating func appendLines(_ bytes: UnsafeRawBufferPointer) -> Int {
        appendLines(count: bytes.count) { $0.copyMemory(from: bytes) }
    }
}
