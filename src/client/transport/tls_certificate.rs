//! The certificate an HTTPS connection was made with (feature `tls`): the TLS client
//! configuration reqwest's `rustls` feature builds (its crypto provider, the platform's roots
//! through `rustls-platform-verifier`, TLS 1.2 and 1.3, ALPN `http/1.1`), with a verifier that
//! notes the leaf certificate's notAfter on its way to the platform verifier
//! (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`).

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

use crate::util::MutexExt as _;

/// Where the leaf certificate's notAfter (Unix seconds) of the last TLS handshake is kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct CertificateSlot(Arc<Mutex<Option<i64>>>);

impl CertificateSlot {
    /// The notAfter of the last leaf certificate a server presented, if any.
    pub(crate) fn not_after(&self) -> Option<i64> {
        *self.0.lock_unpoisoned()
    }
}

/// The notAfter of a DER certificate, in Unix seconds; `None` when it does not parse.
///
/// Only the path to the field is read (RFC 5280, 4.1):
///
/// ```text
/// Certificate    ::= SEQUENCE { tbsCertificate TBSCertificate, ... }
/// TBSCertificate ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1, serialNumber INTEGER,
///                               signature AlgorithmIdentifier, issuer Name, validity Validity, ... }
/// Validity       ::= SEQUENCE { notBefore Time, notAfter Time }
/// Time           ::= CHOICE { utcTime UTCTime, generalTime GeneralizedTime }
/// ```
///
/// The certificate is then verified by the platform verifier (rustls-webpki), which parses all of
/// it; this reader only needs the one date, so it takes six DER elements and the two time encodings
/// RFC 5280 allows (`YYMMDDHHMMSSZ`, years 1950 to 2049, and `YYYYMMDDHHMMSSZ`) instead of a whole
/// X.509 parser and its ~20 crates. Its unit tests compare it with x509-parser on certificates
/// rcgen makes.
pub(crate) fn not_after(der: &[u8]) -> Option<i64> {
    const SEQUENCE: u8 = 0x30;
    const INTEGER: u8 = 0x02;
    const VERSION: u8 = 0xa0; // [0], constructed
    let (certificate, _) = element(der, SEQUENCE)?;
    let (tbs, _) = element(certificate, SEQUENCE)?;
    let rest = match element(tbs, VERSION) {
        Some((_, rest)) => rest,
        None => tbs,
    };
    let (_serial, rest) = element(rest, INTEGER)?;
    let (_signature, rest) = element(rest, SEQUENCE)?;
    let (_issuer, rest) = element(rest, SEQUENCE)?;
    let (validity, _) = element(rest, SEQUENCE)?;
    let (_not_before, rest) = time(validity)?;
    let (not_after, rest) = time(rest)?;
    rest.is_empty().then_some(not_after)
}

/// The DER element with tag `tag` at the start of `input`: its contents and what follows it.
/// Definite lengths in their shortest form only, as DER requires.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = input.split_first()?;
    if first != tag {
        return None;
    }
    let (&length, rest) = rest.split_first()?;
    let (length, rest) = match length {
        0..=0x7f => (usize::from(length), rest),
        0x81..=0x84 => {
            let (bytes, rest) = rest.split_at_checked(usize::from(length & 0x7f))?;
            let length = bytes.iter().fold(0, |n, &b| n << 8 | usize::from(b));
            if bytes[0] == 0 || length < 0x80 {
                return None;
            }
            (length, rest)
        }
        // 0x80 is BER's indefinite length; longer lengths are not a certificate's.
        _ => return None,
    };
    rest.split_at_checked(length)
}

/// A `Time` at the start of `input`, in Unix seconds, and what follows it.
fn time(input: &[u8]) -> Option<(i64, &[u8])> {
    const UTC_TIME: u8 = 0x17;
    const GENERALIZED_TIME: u8 = 0x18;
    let (digits, year, rest) = if let Some((text, rest)) = element(input, UTC_TIME) {
        // Two-digit years: 50 to 99 are 19xx, 00 to 49 are 20xx (RFC 5280, 4.1.2.5.1).
        let digits = text.strip_suffix(b"Z").filter(|d| d.len() == 12)?;
        let yy = number(&digits[..2])?;
        (
            &digits[2..],
            if yy >= 50 { 1900 + yy } else { 2000 + yy },
            rest,
        )
    } else {
        let (text, rest) = element(input, GENERALIZED_TIME)?;
        let digits = text.strip_suffix(b"Z").filter(|d| d.len() == 14)?;
        (&digits[4..], number(&digits[..4])?, rest)
    };
    let [month, day, hour, minute, second] = [0, 2, 4, 6, 8].map(|at| number(&digits[at..at + 2]));
    let (month, day, hour, minute, second) = (month?, day?, hour?, minute?, second?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if !(1..=month_days).contains(&day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3_600 + minute * 60 + second, rest))
}

/// The decimal number that ASCII `digits` spell (digits only: no sign, no space).
fn number(digits: &[u8]) -> Option<i64> {
    digits.iter().try_fold(0, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// reqwest's rustls client configuration, whose verifier writes the leaf certificate's notAfter
/// to `slot` at each full handshake (before it is verified: an expired certificate is noted too,
/// and the handshake then fails as it would have).
pub(crate) fn client_config(slot: CertificateSlot) -> Result<ClientConfig, rustls::Error> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let platform = rustls_platform_verifier::Verifier::new(provider.clone())?;
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NotingVerifier {
            inner: platform,
            slot,
        }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The platform verifier, noting the leaf certificate first.
#[derive(Debug)]
struct NotingVerifier {
    inner: rustls_platform_verifier::Verifier,
    slot: CertificateSlot,
}

impl ServerCertVerifier for NotingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.slot.0.lock_unpoisoned() = not_after(end_entity);
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}

#[cfg(test)]
mod tests {
    use crate::client::transport::tls_certificate::*;

    #[test]
    fn garbage_is_no_certificate() {
        assert_eq!(not_after(b"not a certificate"), None);
        assert_eq!(not_after(&[]), None);
        assert_eq!(CertificateSlot::default().not_after(), None);
    }

    /// A certificate rcgen makes, valid until `not_after`.
    fn certificate(key: &rcgen::KeyPair, not_after: i64) -> Vec<u8> {
        let epoch = rcgen::date_time_ymd(1970, 1, 1);
        let offset = std::time::Duration::from_secs(not_after.unsigned_abs());
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.not_before = rcgen::date_time_ymd(1949, 6, 1);
        params.not_after = if not_after >= 0 {
            epoch + offset
        } else {
            epoch - offset
        };
        params.self_signed(key).unwrap().der().to_vec()
    }

    /// What x509-parser reads as the notAfter of `der`.
    fn oracle(der: &[u8]) -> Option<i64> {
        let (_, parsed) = x509_parser::parse_x509_certificate(der).ok()?;
        Some(parsed.validity().not_after.timestamp())
    }

    /// Both encodings and their edges (UTCTime up to 2049, GeneralizedTime from 2050 and before
    /// 1950), leap days and the turns of centuries, as x509-parser reads them.
    #[test]
    fn reads_the_not_after_that_x509_parser_reads() {
        let key = rcgen::KeyPair::generate().unwrap();
        let edges = [
            -631_152_001,    // 1949-12-31T23:59:59Z: GeneralizedTime
            -631_152_000,    // 1950-01-01T00:00:00Z: UTCTime "50..."
            -1,              // 1969-12-31T23:59:59Z
            0,               // 1970-01-01T00:00:00Z
            951_782_400,     // 2000-02-29T00:00:00Z
            2_147_483_648,   // 2038-01-19T03:14:08Z
            2_524_607_999,   // 2049-12-31T23:59:59Z: the last UTCTime
            2_524_608_000,   // 2050-01-01T00:00:00Z: GeneralizedTime
            4_107_542_399,   // 2100-02-28T23:59:59Z (2100 is not a leap year)
            4_107_542_400,   // 2100-03-01T00:00:00Z
            253_402_300_799, // 9999-12-31T23:59:59Z
        ];
        for at in edges {
            let der = certificate(&key, at);
            assert_eq!(oracle(&der), Some(at), "rcgen wrote {at}");
            assert_eq!(not_after(&der), Some(at), "notAfter {at}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any second from 1900 to 9999; every strict prefix of the certificate is none.
        #[test]
        fn agrees_with_x509_parser(at in -2_208_988_800_i64..253_402_300_800) {
            let key = rcgen::KeyPair::generate().unwrap();
            let der = certificate(&key, at);
            proptest::prop_assert_eq!(not_after(&der), oracle(&der));
            proptest::prop_assert_eq!(not_after(&der), Some(at));
            for end in 0..der.len() {
                proptest::prop_assert_eq!(not_after(&der[..end]), None);
            }
        }
    }

    /// Encodings that DER or RFC 5280 do not allow.
    #[test]
    fn refuses_what_a_certificate_may_not_hold() {
        // Lengths: long form for a short length, a leading zero, indefinite.
        assert_eq!(element(&[0x30, 0x81, 0x01, 0x00], 0x30), None);
        assert_eq!(element(&[0x30, 0x82, 0x00, 0x80], 0x30), None);
        assert_eq!(element(&[0x30, 0x80, 0x00, 0x00], 0x30), None);
        assert_eq!(
            element(&[0x30, 0x01, 0x05], 0x30),
            Some((&[0x05][..], &[][..]))
        );
        let seconds = |der: Vec<u8>| time(&der).map(|(at, rest)| (at, rest.len()));
        let utc = |text: &[u8]| seconds([&[0x17, text.len() as u8][..], text].concat());
        let generalized = |text: &[u8]| seconds([&[0x18, text.len() as u8][..], text].concat());
        assert_eq!(utc(b"490101000000Z"), Some((2_493_072_000, 0)));
        assert_eq!(utc(b"4901010000Z"), None); // no seconds
        assert_eq!(utc(b"490101000000+0100"), None); // not UTC
        assert_eq!(utc(b"490230000000Z"), None); // 30 February
        assert_eq!(utc(b"490101240000Z"), None);
        assert_eq!(utc(b"4901-1000000Z"), None);
        assert_eq!(generalized(b"20500101000000Z"), Some((2_524_608_000, 0)));
        assert_eq!(generalized(b"20500101000000.5Z"), None); // fractions
        assert_eq!(generalized(b"21000229000000Z"), None); // not a leap year
        assert_eq!(generalized(b"20000229000000Z"), Some((951_782_400, 0)));
    }
}
