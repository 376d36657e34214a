extension HTTPFields {
    /// Field names looked for or left out together (`containsAny(of:)`, a head written
    /// without them), made once: the known ones as one bit each, any other kept to compare
    /// by its bytes.
    public struct NameSet: Sendable {
        fileprivate var known: UInt32 = 0
        fileprivate var others: [Name] = []

        public init(_ names: some Sequence<Name>) {
            for name in names { insert(name) }
        }

        /// RFC 9110 §7.6.1: the fields that describe one connection, whether or not
        /// `Connection` names them.
        static let alwaysHopByHop = NameSet(known: FieldName.allCases.filter(\.isAlwaysHopByHop))

        private init(known names: [FieldName]) {
            for name in names { insert(known: name) }
        }

        public mutating func insert(_ name: Name) {
            if name.known != .other {
                insert(known: name.known)
            } else if !others.contains(name) {
                others.append(name)
            }
        }

        mutating func insert(known name: FieldName) {
            known |= name.bit
        }

        public mutating func formUnion(_ other: NameSet) {
            known |= other.known
            for name in other.others where !others.contains(name) { others.append(name) }
        }

        public func contains(_ name: Name) -> Bool {
            name.known != .other ? known & name.known.bit != 0 : others.contains(name)
        }

        @inline(__always)
        func contains(_ entry: Entry, in lines: UnsafeRawBufferPointer) -> Bool {
            if entry.name != .other { return known & entry.name.bit != 0 }
            // Most fields are of other names, and most sets hold no other name.
            guard !others.isEmpty else { return false }
            return others.contains { $0.withBytes { name, _ in HTTPFields.entry(entry, in: lines, isNamed: name, .other) } }
        }
    }

    /// Whether a field is named in `names`: one pass over the fields for all of them.
    public func containsAny(of names: NameSet) -> Bool {
        // None of the known ones, and no other to look for: no walk.
        guard names.known & knownNames != 0 || !names.others.isEmpty else { return false }
        return withLines { lines in containsEntry { names.contains($0, in: lines) } }
    }
}
