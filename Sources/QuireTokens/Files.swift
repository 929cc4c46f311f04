import Foundation
import QuireJWT
#if canImport(Glibc)
import Glibc
#endif

/// Private files for keys, client hashes and credentials: directories 0700, files 0600, replaced
/// atomically (write a temporary file, fsync, rename) so a reader never sees half a file.
enum PrivateFiles {
    static func makeDirectory(_ path: String) throws(TokenStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw TokenStoreError("cannot create directory '\(path)': \(error.localizedDescription)")
        }
        chmod(path, 0o700)
    }

    static func write(_ bytes: [UInt8], to path: String) throws(TokenStoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        try makeDirectory(directory.isEmpty ? "." : directory)
        let temporary = path + ".tmp-\(getpid())-\(Base64URL.encode(Sodium.randomBytes(6)))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TokenStoreError("cannot create '\(temporary)': \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw TokenStoreError("cannot write '\(temporary)': \(reason)")
            }
            offset += written
        }
        fchmod(fd, 0o600)
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw TokenStoreError("cannot rename '\(temporary)' to '\(path)': \(reason)")
        }
    }

    /// The file's bytes, or `nil` when it does not exist.
    static func read(_ path: String) throws(TokenStoreError) -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw TokenStoreError("cannot read '\(path)'") }
        return Array(data)
    }

    /// Nanoseconds of the last change to a file or directory (0 when missing): cheap change detection.
    static func modificationStamp(_ path: String) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec) ^ Int64(info.st_size) << 1 ^ Int64(info.st_ino) << 3
    }

    /// Runs `body` holding an exclusive `flock` on `lockPath`, so concurrent `quire clients` and
    /// `quire keys` commands do not lose each other's changes.
    static func withLock<T>(_ lockPath: String, _ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        let directory = (lockPath as NSString).deletingLastPathComponent
        try makeDirectory(directory)
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TokenStoreError("cannot open lock '\(lockPath)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw TokenStoreError("cannot lock '\(lockPath)': \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

/// Seconds since the epoch, the time unit of JWT claims.
public func epochSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
