import COnnxRuntime

/// Why the scene engine cannot read.
public struct SceneError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One ONNX model opened for one thread's use (ONNX Runtime's C API, Sources/COnnxRuntime). Its
/// operators run on the process's one pool of threads, which the first model opened sizes.
final class OnnxModel {
    private let session: OpaquePointer

    /// Whether ONNX Runtime could be loaded, and why not.
    static var unavailableReason: String? { quire_ort_available() == 1 ? nil : quire_ort_error().map { String(cString: $0) } }
    static var version: String? { quire_ort_version().map { String(cString: $0) } }

    init(path: String, threads: Int) throws(SceneError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let session = quire_ort_open(path, Int32(threads), &error, error.count) else {
            throw SceneError("\(path): \(Self.message(error))")
        }
        self.session = session
    }

    deinit { quire_ort_close(session) }

    /// The text a C call wrote into `buffer`, up to its terminating zero.
    static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs the model on one float tensor and hands `read` its output where ONNX Runtime wrote it, with
    /// its shape; the output is released when `read` returns (a batch of recognised lines is tens of
    /// megabytes of scores: copying them cost more than decoding them).
    func run<Result>(_ input: [Float], shape: [Int],
                     _ read: (_ values: UnsafeBufferPointer<Float>, _ shape: [Int]) throws(SceneError) -> Result) throws(SceneError) -> Result {
        var value: UnsafeMutableRawPointer?
        var output: UnsafePointer<Float>?
        var outputShape = [Int64](repeating: 0, count: 8)
        var rank = outputShape.count
        var error = [CChar](repeating: 0, count: 512)
        let dims = shape.map(Int64.init)
        let status = quire_ort_run(session, input, dims, dims.count, &value, &output, &outputShape, &rank, &error, error.count)
        guard status == 0 else { throw SceneError(Self.message(error)) }
        defer { quire_ort_release(value) }
        let dimensions = outputShape.prefix(rank).map(Int.init)
        guard dimensions.allSatisfy({ $0 >= 0 }) else { throw SceneError("the model's output has the shape \(dimensions)") }
        let count = dimensions.reduce(1, *)
        return try read(UnsafeBufferPointer(start: count == 0 ? nil : output, count: count), dimensions)
    }

    /// The model's metadata value for `key`.
    func metadata(_ key: String) -> String? {
        guard let value = quire_ort_metadata(session, key) else { return nil }
        defer { quire_ort_free(value) }
        return String(cString: value)
    }
}
