import Testing
import UpdateCore

/// `HostAnswer`: the one reading of a host's answer for a publication file, which the app's
/// URLSession adapter and the tools' HTTP client both use.
@Suite struct HostAnswerTests {
    static let url = "https://lists.example/pub/from-3.push"
    static let file: [UInt8] = Array("{\"signed\":{}}".utf8)
    static let page: [UInt8] = Array("\n  <!doctype html><title>Not found</title>".utf8)

    func answer(_ status: Int, _ body: [UInt8], type: String? = nil, limit: Int = 1000, optional: Bool) -> HostAnswer {
        HostAnswer(url: Self.url, status: status, contentType: type, body: body, limit: limit, optional: optional)
    }

    @Test(arguments: [false, true]) func aFileIsItsBytesAndNoSuchFileIsMissing(optional: Bool) {
        #expect(answer(200, Self.file, optional: optional) == .file(Self.file))
        #expect(answer(404, Self.page, optional: optional) == .missing)
        #expect(answer(410, [], optional: optional) == .missing)
    }

    /// A static host hides a missing file behind a 403 (S3 without list permission) or a page
    /// of its own: for a file that may be missing, both mean missing; for one the signed
    /// metadata names, a 403 is refused with what to do, and a page is read (and fails to parse).
    @Test func aHiddenMissingFileIsMissingOnlyWhenItMayBe() {
        #expect(answer(403, [], optional: true) == .missing)
        #expect(answer(200, Self.page, optional: true) == .missing)
        #expect(answer(200, Self.file, type: "Text/HTML; charset=utf-8", optional: true) == .missing)
        #expect(answer(200, Self.page, optional: false) == .file(Self.page))
        // A page behind a byte-order mark, or typed XHTML or with a space before its type, too.
        #expect(answer(200, [0xEF, 0xBB, 0xBF] + Self.page, optional: true) == .missing)
        #expect(answer(200, Self.file, type: " text/html", optional: true) == .missing)
        #expect(answer(200, Self.file, type: "application/xhtml+xml", optional: true) == .missing)
        #expect(answer(0, [], optional: true) == .refused("\(Self.url) gave no HTTP answer."))
        #expect(
            answer(403, [], optional: false)
                == .refused(
                    "\(Self.url) answered 403; 200 or 404 was expected (S3 answers 403 for a file it does not have when it may not list the bucket, so the file may be missing, removed by publish --keep while a cache still names it; or the bucket refuses reads: give the files public read access)."
                )
        )
    }

    @Test func anyOtherAnswerIsRefusedWithItsSentence() throws {
        let refused = HostAnswer(
            url: Self.url,
            status: 503,
            reason: "Service Unavailable",
            body: [],
            limit: 10,
            optional: true
        )
        #expect(refused == .refused("\(Self.url) answered 503 Service Unavailable; 200 or 404 was expected."))
        #expect(
            answer(200, Self.file, limit: 5, optional: false)
                == .refused("\(Self.url) is larger than the 5 bytes it may have.")
        )
        #expect(throws: UpdateError.self) { try refused.bytes() }
        do {
            _ = try refused.bytes()
        } catch {
            #expect(error.code == .unavailable && error.message.hasPrefix(Self.url))
        }
        #expect(try answer(404, [], optional: false).bytes() == nil)
        #expect(try answer(200, Self.file, optional: false).bytes() == Self.file)
    }
}
