/// The fields of a header or trailer section: ordered, duplicates kept.
///
/// A proxy must forward what it received: folding duplicates into a dictionary loses
/// `Set-Cookie` lines and hides the duplicate `Content-Length` or `Host` lines that request
/// smuggling relies on. Lookups match names ASCII case-insensitively (RFC 9110 §5.1) by
/// comparing bytes, never by building lowercased strings.
public struct HTTPFields: Sendable, Equatable, Hashable {
    @usableFromInline var storage: [HTTPField]

    public init() {
        storage = []
    }

    public init(_ fields: some Sequence<HTTPField>) {
        storage = Array(fields)
    }

    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        storage.reserveCapacity(minimumCapacity)
    }

    public mutating func append(name: String, value: String) {
        storage.append(HTTPField(name: name, value: value))
    }

    public mutating func append(_ field: HTTPField) {
        storage.append(field)
    }

    /// The first value of the field `name`, or nil.
    public subscript(name: String) -> String? {
        for field in storage where ASCII.equalsCaseInsensitive(field.name, name) {
            return field.value
        }
        return nil
    }

    /// Every value of the field `name`, in order of arrival.
    public func values(named name: String) -> [String] {
        storage.compactMap { ASCII.equalsCaseInsensitive($0.name, name) ? $0.value : nil }
    }

    public func contains(_ name: String) -> Bool {
        storage.contains { ASCII.equalsCaseInsensitive($0.name, name) }
    }

    public mutating func removeAll(named name: String) {
        storage.removeAll { ASCII.equalsCaseInsensitive($0.name, name) }
    }

    public mutating func removeAll(where shouldBeRemoved: (HTTPField) throws -> Bool) rethrows {
        try storage.removeAll(where: shouldBeRemoved)
    }

    /// Replaces every `name` line with one `name: value` line, kept where the first one was
    /// (appended when there was none), so the order of the other fields does not change.
    public mutating func set(name: String, value: String) {
        guard let first = storage.firstIndex(where: { ASCII.equalsCaseInsensitive($0.name, name) }) else {
            storage.append(HTTPField(name: name, value: value))
            return
        }
        storage[first] = HTTPField(name: name, value: value)
        var index = storage.index(after: first)
        while index < storage.endIndex {
            if ASCII.equalsCaseInsensitive(storage[index].name, name) {
                storage.remove(at: index)
            } else {
                index += 1
            }
        }
    }
}

extension HTTPFields: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Element = HTTPField

    public var startIndex: Int { storage.startIndex }
    public var endIndex: Int { storage.endIndex }

    public subscript(position: Int) -> HTTPField {
        get { storage[position] }
        set { storage[position] = newValue }
    }
}

extension HTTPFields: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: HTTPField...) {
        storage = elements
    }
}

/// `["Host": "example.com", "Accept": "*/*"]`: a dictionary literal keeps its order and its
/// duplicates, which is what a field section is.
extension HTTPFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        storage = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }
}

extension HTTPFields: CustomStringConvertible {
    /// Names only, like `HTTPField.description`: values may be credentials.
    public var description: String {
        "[" + storage.map(\.name).joined(separator: ", ") + "]"
    }
}
