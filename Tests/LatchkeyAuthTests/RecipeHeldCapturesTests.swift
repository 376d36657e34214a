import Foundation
import LatchkeyAuth
import LatchkeyConfig
import Testing

/// Which capture names a recipe's result shows (`status`, `latchkey login`).
@Suite struct RecipeHeldCapturesTests {
    @Test func theNamesHeldInTheRecipesOrderAndNoOthers() throws {
        let step = { (name: String, captures: [String]) in
            RecipeStep(name: name, request: RecipeRequest(method: "GET", url: try! RecipeTemplate(parsing: "https://h/\(name)")),
                       captures: captures.map { RecipeCapture(name: $0, source: .json(try! JSONPath(parsing: $0)), secret: true) })
        }
        let recipe = Recipe(steps: [step("token", ["request_token", "expires_at"]), step("session", ["session_id"])])
        let token = TokenSet(accessToken: "s", tokenType: nil, obtainedAt: Date(),
                             captures: ["session_id": "s", "request_token": "r", "stale": "x"])
        #expect(recipe.heldCaptureNames(in: token) == ["request_token", "session_id"])
        #expect(recipe.heldCaptureNames(in: TokenSet(accessToken: "", obtainedAt: Date())) == [])
    }
}
