/// RFC 7301 §3.1: the client's protocol list is a sequence of length-prefixed names.
enum ALPN {
    static let http11 = Array("http/1.1".utf8)

    /// Where `http/1.1` is in a client's list (the name's bytes, without its length), nil
    /// when it is not offered or the list is malformed.
    static func http11<List: Collection<UInt8>>(in list: List) -> Range<Int>? where List.Index == Int {
        var index = list.startIndex
        while index < list.endIndex {
            let length = Int(list[index])
            let name = (index + 1)..<(index + 1 + length)
            guard length > 0, name.upperBound <= list.endIndex else { return nil }
            if list[name].elementsEqual(http11) { return name }
            index = name.upperBound
        }
        return nil
    }
}
