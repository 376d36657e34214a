import LatchkeyHTTP
import Testing

@Suite struct ResponseBodyTests {
    @Test(arguments: [
        ("GET", 200, true), ("HEAD", 200, false), ("GET", 204, false), ("GET", 304, false),
        ("GET", 100, false), ("GET", 101, false), ("POST", 201, true), ("GET", 404, true),
        ("CONNECT", 200, false), ("CONNECT", 407, true), ("head", 200, true),
    ])
    func bodyRules(method: String, status: Int, carries: Bool) {
        #expect(responseCarriesBody(requestMethod: method, status: status) == carries)
    }
}
