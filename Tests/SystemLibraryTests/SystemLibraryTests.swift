import CHeif
import CSQLite
import CSodium
import CTesseract
import CLeptonica
import Foundation
import Testing

/// Each C system-library module imports, links and answers at run time.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("CTesseract: Tesseract 5 and Leptonica link")
    func tesseract() throws {
        let tesseract = try #require(TessVersion(), "TessVersion() returned NULL")
        #expect(String(cString: tesseract).hasPrefix("5"), "\(String(cString: tesseract))")

        let leptonica = try #require(getLeptonicaVersion(), "getLeptonicaVersion() returned NULL")
        defer { lept_free(leptonica) }
        #expect(String(cString: leptonica).hasPrefix("leptonica-1."), "\(String(cString: leptonica))")
    }

    @Test("CSodium: initialises and has 32-byte Ed25519 public keys")
    func sodium() {
        #expect(sodium_init() >= 0)
        #expect(sodium_init() == 1, "a second sodium_init() should report 'already initialised'")
        #expect(crypto_sign_ed25519_PUBLICKEYBYTES == 32)
        #expect(crypto_sign_publickeybytes() == 32)
        #expect(crypto_sign_ed25519_publickeybytes() == 32)
    }

    @Test("CSQLite: the library is SQLite 3 and matches its header")
    func sqlite() throws {
        let version = String(cString: try #require(sqlite3_libversion()))
        #expect(version.hasPrefix("3."), "\(version)")
        #expect(version == SQLITE_VERSION)
        #expect(sqlite3_libversion_number() == SQLITE_VERSION_NUMBER)
    }

    @Test("CHeif: libheif links and reports its version")
    func heif() throws {
        let version = String(cString: try #require(heif_get_version(), "heif_get_version() returned NULL"))
        #expect(version.hasPrefix("\(heif_get_version_number_major())."), "\(version)")
        #expect(heif_get_version_number() >> 24 == UInt32(heif_get_version_number_major()))
    }
}
