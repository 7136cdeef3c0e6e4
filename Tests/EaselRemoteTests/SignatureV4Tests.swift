import EaselRemote
import Foundation
import Testing

/// AWS Signature V4 against the examples AWS publishes for S3 (their credentials, date and
/// signatures), and the encodings the canonical request needs.
@Suite struct SignatureV4Tests {
    let example = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                region: "us-east-1")
    let may24 = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    func signature(_ headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "Authorization" }?.1.components(separatedBy: "Signature=").last
    }

    @Test func getObjectMatchesAWSsExample() {
        let headers = SignatureV4(credentials: example).sign(
            method: "GET", path: "/test.txt", query: [],
            headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: SignatureV4.emptyPayloadHash, date: may24)
        #expect(signature(headers) == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        let authorization = headers.first { $0.0 == "Authorization" }?.1 ?? ""
        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "))
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
    }

    @Test func listObjectsWithAQueryMatchesAWSsExample() {
        let headers = SignatureV4(credentials: example).sign(
            method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")],
            headers: [("host", "examplebucket.s3.amazonaws.com")], payloadHash: SignatureV4.emptyPayloadHash, date: may24)
        #expect(signature(headers) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func aSessionTokenIsSentAndSigned() {
        var credentials = example
        credentials.sessionToken = "token/with+chars"
        let headers = SignatureV4(credentials: credentials).sign(
            method: "GET", path: "/a", query: [], headers: [("host", "h")], payloadHash: SignatureV4.emptyPayloadHash, date: may24)
        #expect(headers.contains { $0 == ("x-amz-security-token", "token/with+chars") })
        #expect(headers.first { $0.0 == "Authorization" }?.1.contains("x-amz-date;x-amz-security-token") == true)
        #expect(signature(headers) != signature(SignatureV4(credentials: example).sign(
            method: "GET", path: "/a", query: [], headers: [("host", "h")], payloadHash: SignatureV4.emptyPayloadHash, date: may24)))
    }

    @Test func encodingKeepsOnlyUnreservedBytes() {
        #expect(SignatureV4.encode("a b/c~d_e.f-g", keepingSlash: true) == "a%20b/c~d_e.f-g")
        #expect(SignatureV4.encode("a/b+c=d&é", keepingSlash: false) == "a%2Fb%2Bc%3Dd%26%C3%A9")
        #expect(SignatureV4.canonicalQuery([("prefix", "a/b"), ("list-type", "2"), ("continuation-token", "x y")])
                == "continuation-token=x%20y&list-type=2&prefix=a%2Fb")
    }

    @Test func credentialsComeFromTheStandardVariables() throws {
        let credentials = try S3Credentials.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "ST", "AWS_REGION": "eu-west-3"])
        #expect(credentials == S3Credentials(accessKeyID: "AK", secretAccessKey: "SK", sessionToken: "ST", region: "eu-west-3"))
        #expect(try S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_DEFAULT_REGION": "ap-south-1"]).region == "ap-south-1")
        #expect(throws: S3Error.missingCredentials) { try S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK"]) }
        #expect(throws: S3Error.self) { try S3Client.Configuration.fromEnvironment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "EASEL_S3_ENDPOINT": "ftp://x"]) }
    }

    @Test func locationsParse() throws {
        #expect(try S3Location("s3://my-bucket/photos") == S3Location(bucket: "my-bucket", prefix: "photos/"))
        #expect(try S3Location("s3://my-bucket/") == S3Location(bucket: "my-bucket", prefix: ""))
        #expect(try S3Location("s3://my-bucket") == S3Location(bucket: "my-bucket", prefix: ""))
        for bad in ["s3://", "s3://A_B/x", "http://bucket/x", "s3://ab/x", "s3://-bucket/x"] {
            #expect(throws: S3Error.self, "\(bad)") { try S3Location(bad) }
        }
    }
}
