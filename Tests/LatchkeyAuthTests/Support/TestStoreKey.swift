import Foundation
@testable import LatchkeyAuth

/// A store key of 32 bytes of `fill`, as its base64 text would give it.
func testStoreKey(_ fill: UInt8 = 7, origin: String = "test key") throws -> StoreKey {
    var text = Array(Data(repeating: fill, count: 32).base64EncodedString().utf8)
    return try StoreKey(text: &text, origin: origin)
}
