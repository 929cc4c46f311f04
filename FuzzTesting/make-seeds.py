#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (Corpus/NAME/seed-*): well-formed messages of each kind, which
libFuzzer then mutates. Run once; the corpora committed are these seeds plus what fuzzing kept
(`scripts/fuzz`). Needs Pillow (the interop venv has it)."""

import base64
import io
import json
import os
import struct
import sys

from PIL import Image, ImageDraw

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    folder = os.path.join(HERE, "Corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def frames(*parts):
    """The wire target's framing: each frame a length byte, then its bytes."""
    out = b""
    for part in parts:
        part = part if isinstance(part, bytes) else part.encode()
        assert len(part) < 256
        out += bytes([len(part)]) + part
    return out


def picture(fmt, size=(40, 16), **options):
    image = Image.new("L", size, 255)
    ImageDraw.Draw(image).text((2, 2), "Hi 12", fill=0)
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def main():
    request = json.dumps({"languages": ["eng"], "mode": "document", "outputs": ["result", "hocr"], "fields": ["receipt"]})
    envelope = json.dumps({"token": "abc.def.ghi", "job": {"priority": "high", "idempotencyKey": "k1"}, "waitMs": 100, "mode": "text"})

    # wire: Majordomo 0.2 / 0.1 / Majortomo messages, Titanic and token replies, broker envelopes.
    write("wire", "mdpc02-request", frames("", "MDPC02", b"\x01", "ocr", request, b"\x89PNG"))
    write("wire", "mdpc01-request", frames("", "MDPC01", "ocr", envelope))
    write("wire", "mdpw02-ready", frames("", "MDPW02", b"\x01", "ocr"))
    write("wire", "mdpw02-reply", frames("", "MDPW02", b"\x03", b"\x00\x6b\x8b\x45\x67", "", '{"text":"hi"}'))
    write("wire", "mdpw02-partial", frames("", "MDPW02", b"\x02", b"\x00\x6b\x8b\x45\x67", "", '{"progress":{"done":1,"total":3}}'))
    write("wire", "mdpw01-heartbeat", frames("", "MDPW01", b"\x04"))
    write("wire", "majortomo-heartbeat", frames("MDPW02", b"\x04", '{"busy":1,"threads":2}'))
    write("wire", "mdpw02-disconnect", frames("", "MDPW02", b"\x05"))
    write("wire", "client-final", frames("MDPC02", b"\x04", "ocr", '{"error":{"code":"busy","message":"x"}}'))
    write("wire", "titanic-status", frames("200", '{"id":"0123456789abcdef0123456789abcdef","state":"done"}'))
    write("wire", "titanic-refusal", frames("400", '{"error":{"code":"bad_request","message":"no"}}'))
    write("wire", "envelope", envelope.encode())
    write("wire", "envelope-escaped", b'{"a":"\\"token\\"","token":"x\\u0041","b":[{"token":1}],"c":{"token":"y"}}')
    write("wire", "worker-report", b'{"busy":0,"threads":2,"engines":["tesseract"],"version":"1"}')

    # json: requests, token messages, a job's status, a key set, tokens, page ranges.
    write("json", "request", request.encode())
    write("json", "request-full", json.dumps({"languages": ["ita", "chi_tra"], "mode": "document", "pages": [1, 3], "pageLimit": 5,
                                                "outputs": ["result", "alto", "pdf"], "autoOrientation": True, "dpi": 300,
                                                "symbols": True, "textLayer": "ignore", "engine": "auto"}).encode())
    write("json", "token-request", b'{"grant_type":"client_credentials","client_id":"app","client_secret":"s","scope":"ocr"}')
    write("json", "token-response", b'{"access_token":"a.b.c","token_type":"Bearer","expires_in":300,"scope":"ocr"}')
    write("json", "job-status", b'{"id":"0123456789abcdef0123456789abcdef","state":"running","progress":{"done":1,"total":2}}')
    write("json", "jwks", b'{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}')
    header = base64.urlsafe_b64encode(b'{"alg":"EdDSA","typ":"JWT","kid":"k1"}').rstrip(b"=")
    claims = base64.urlsafe_b64encode(b'{"sub":"app","aud":"quire","iss":"quire","exp":1900000000,"scope":"ocr","jti":"1"}').rstrip(b"=")
    write("json", "jwt", header + b"." + claims + b"." + b"A" * 86)
    write("json", "jwt-plain", b'{"alg":"EdDSA","kid":"k1"}.{"sub":"a","exp":1}.sig')
    write("json", "pages", b"1-3,5,7-")
    write("json", "result", open(os.path.join(HERE, "..", "Tests", "QuireFormatsTests", "Fixtures", "upright.json"), "rb").read()[:4000])

    # images: each format Quire sniffs, a JPEG with an EXIF orientation, a TIFF of three pages, a PDF head.
    for fmt, ext, options in [("PNG", "png", {}), ("JPEG", "jpg", {}), ("GIF", "gif", {}), ("BMP", "bmp", {}), ("WEBP", "webp", {}),
                              ("PPM", "pnm", {}), ("TIFF", "tif", {"compression": "tiff_lzw"})]:
        write("images", ext, picture(fmt, **options))
    exif = Image.Exif()
    exif[0x0112] = 6
    write("images", "exif-6.jpg", picture("JPEG", exif=exif.tobytes()))
    pages = [Image.new("L", (20 + 10 * i, 12), 255) for i in range(3)]
    out = io.BytesIO()
    pages[0].save(out, format="TIFF", save_all=True, append_images=pages[1:])
    write("images", "three-pages.tif", out.getvalue())
    write("images", "pdf-head", b"%PDF-1.7\n1 0 obj<</Type/Catalog>>endobj\n%%EOF\n")
    write("images", "bmp-rle", b"BM" + struct.pack("<IHHI", 70, 0, 0, 62) + struct.pack("<IiiHHIIiiII", 40, 4, 4, 1, 8, 1, 8, 0, 0, 2, 0) + bytes(16))

    # gateway: a method byte, a path byte (FuzzTargets.gateway's lists), then path tail, query, headers
    # and body apart by NUL bytes.
    png = picture("PNG")
    b64 = base64.b64encode(png).decode()

    def call(method, path, tail="", query="", headers="Content-Type: application/json", body=b""):
        body = body if isinstance(body, bytes) else body.encode()
        return bytes([method, path]) + tail.encode() + b"\0" + query.encode() + b"\0" + headers.encode() + b"\0" + body

    write("gateway", "vision-annotate", call(0, 0, body=json.dumps({"requests": [{"image": {"content": b64},
                                                                                   "features": [{"type": "DOCUMENT_TEXT_DETECTION"}],
                                                                                   "imageContext": {"languageHints": ["it"]}}]})))
    write("gateway", "vision-files", call(0, 1, body=json.dumps({"requests": [{"inputConfig": {"content": b64, "mimeType": "application/pdf"},
                                                                                "features": [{"type": "DOCUMENT_TEXT_DETECTION"}], "pages": [1, -1]}]})))
    write("gateway", "firebase", call(0, 2, headers="Content-Type: application/json\nAuthorization: Bearer a.b.c",
                                      body=json.dumps({"data": {"image": {"content": b64}, "features": [{"type": "TEXT_DETECTION"}]}})))
    write("gateway", "azure-read-binary", call(0, 4, query="language=it&readingOrder=natural&pages=1-2",
                                               headers="Content-Type: application/octet-stream\nOcp-Apim-Subscription-Key: k", body=png))
    write("gateway", "azure-read-url", call(0, 4, body='{"url":"http://example.invalid/a.png"}'))
    write("gateway", "azure-read-result", call(1, 5, tail="0123456789abcdef0123456789abcdef"))
    write("gateway", "azure-v2", call(0, 6, headers="Content-Type: application/octet-stream", body=png))
    write("gateway", "image-analysis", call(0, 8, query="api-version=2024-02-01&features=read&language=en",
                                            headers="Content-Type: application/octet-stream", body=png))
    write("gateway", "di-receipt", call(0, 9, query="api-version=2024-11-30&pages=1&locale=en-US&stringIndexType=utf16CodeUnit",
                                        body=json.dumps({"base64Source": b64})))
    write("gateway", "di-result", call(1, 10, tail="0123456789abcdef0123456789abcdef", query="api-version=2024-11-30"))
    write("gateway", "fr-read", call(0, 11, query="api-version=2023-07-31", headers="Content-Type: image/png", body=png))
    write("gateway", "oauth-token", call(0, 13, headers="Content-Type: application/x-www-form-urlencoded",
                                         body="grant_type=client_credentials&client_id=app&client_secret=s&scope=ocr"))
    write("gateway", "wrong-method", call(3, 0))
    write("gateway", "not-found", call(1, 15, tail="nothing/here"))


if __name__ == "__main__":
    sys.exit(main())
