import Foundation
import Testing

@Suite("The quire command line")
struct CLITests {
    @Test func version() throws {
        let r = try runQuire(["--version"])
        #expect(r.status == 0)
        #expect(r.out.hasPrefix("quire 0."))
        // The engine linked, as the library reports it: scripts/build-tesseract's when it is installed
        // (Package.swift links it then), else Debian 12's 5.3.0.
        let bundled = try? String(contentsOfFile: "/opt/quire-tesseract/quire-tesseract-version", encoding: .utf8)
        let engine = bundled?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "5.3.0"
        #expect(r.out.contains("(OCR engine: tesseract \(engine))"))
        // PDFium as scripts/install-pdfium installed it (scripts/test runs it first).
        let pdfium = try String(contentsOfFile: "/opt/quire-pdfium/pdfium-version", encoding: .utf8)
        #expect(r.out.contains("(PDF: pdfium \(pdfium.trimmingCharacters(in: .whitespacesAndNewlines)))"))
        let off = try runQuire(["--version"], environment: ["QUIRE_PDFIUM": "/nonexistent/libpdfium.so"])
        #expect(off.out.contains("(PDF: off, QUIRE_PDFIUM=/nonexistent/libpdfium.so: "))
        // ONNX Runtime for the scene engine, as scripts/install-onnxruntime installed it.
        let onnxRuntime = try String(contentsOfFile: "/opt/quire-onnxruntime/lib/onnxruntime-version", encoding: .utf8)
        #expect(r.out.contains("(scene engine: onnxruntime \(onnxRuntime.trimmingCharacters(in: .whitespacesAndNewlines)))"))
        let sceneOff = try runQuire(["--version"], environment: ["QUIRE_ONNXRUNTIME": "/nonexistent/libonnxruntime.so"])
        #expect(sceneOff.out.contains("(scene engine: off, QUIRE_ONNXRUNTIME=/nonexistent/libonnxruntime.so: "))
    }

    @Test func help() throws {
        let r = try runQuire(["--help"])
        #expect(r.status == 0)
        #expect(r.out.contains("broker"))
        #expect(r.out.contains("worker <kind>"))
        let sub = try runQuire(["broker", "--help"])
        #expect(sub.status == 0)
        #expect(sub.out.contains("--bind ENDPOINT"))
    }

    @Test("usage errors exit 2 and say what was wrong", arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["broker", "--bogus"], "unknown option '--bogus'"),
        (["broker", "--heartbeat-interval-ms", "soon"], "expected an integer"),
        (["broker", "--bind"], "needs a value"),
        (["worker"], "missing the worker kind"),
        (["worker", "teapot"], "unknown worker kind 'teapot'"),
        (["worker", "echo", "--dialect", "mdp03"], "unknown dialect 'mdp03'"),
        (["call"], "missing the service name"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let r = try runQuire(arguments)
        #expect(r.status == 2)
        #expect(r.err.contains(message), "stderr: \(r.err)")
    }

    @Test("a bad QUIRE_* value is a usage error, not ignored")
    func badEnvironment() throws {
        let r = try runQuire(["broker"], environment: ["QUIRE_HEARTBEAT_LIVENESS": "-3"])
        #expect(r.status == 2)
        #expect(r.err.contains("QUIRE_HEARTBEAT_LIVENESS"))
    }

    @Test("a broker that cannot bind exits 1 naming the endpoint")
    func bindFailure() throws {
        let r = try runQuire(["broker", "--bind", "tcp://256.0.0.1:1"])
        #expect(r.status == 1)
        #expect(r.err.contains("tcp://256.0.0.1:1"))
    }

    @Test("quire call: reply frames on stdout; a typed error as JSON on stderr with exit 1")
    func call() async throws {
        let broker = try QuireProcess("broker", ["broker", "--bind", "tcp://127.0.0.1:*", "--request-timeout-ms", "200"])
        defer { withExtendedLifetime(broker) {} }
        let endpoint = try #require(await broker.boundEndpoint())
        let r = try runQuire(["call", "nobody", "x", "--broker", endpoint, "--retries", "0"])
        #expect(r.status == 1)
        #expect(r.err.contains("\"code\":\"service_unavailable\""))
        let worker = try QuireProcess("w", ["worker", "echo", "--broker", endpoint])
        defer { withExtendedLifetime(worker) {} }
        #expect(await broker.waitForLog("worker ready"))
        let ok = try runQuire(["call", "echo", "one", "two", "--broker", endpoint])
        #expect(ok.status == 0)
        #expect(ok.out == "one\ntwo\n")
    }
}
