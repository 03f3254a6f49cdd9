//! TLS against a self-signed loopback server: trusted once its root is
//! configured, refused as unreachable without it.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_protocol::Request;
use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
use mcp_transport_http::HttpTransportBuilder;
use tokio::net::TcpListener;

/// A TLS server for 127.0.0.1 that answers every POST with `{}`; returns
/// its URL and its certificate (DER).
async fn tls_server(h2: bool) -> (String, Vec<u8>, tokio::task::JoinHandle<()>) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert_der = certified.cert.der().to_vec();
    let key =
        rustls::pki_types::PrivateKeyDer::try_from(certified.key_pair.serialize_der()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(cert_der.clone())],
            key,
        )
        .unwrap();
    config.alpn_protocols = if h2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(socket).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    |request: http::Request<hyper::body::Incoming>| async move {
                        let version = format!("{:?}", request.version());
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let id = serde_json::from_slice::<serde_json::Value>(&body).unwrap()["id"]
                            .clone();
                        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"secure": true, "version": version}});
                        Ok::<_, Infallible>(
                            http::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(answer.to_string())))
                                .unwrap(),
                        )
                    },
                );
                if h2 {
                    let _ = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                }
            });
        }
    });
    (url, cert_der, task)
}

#[tokio::test]
async fn a_self_signed_server_works_with_its_root_configured() {
    let (url, cert, server) = tls_server(false).await;
    let transport = HttpTransportBuilder::new(url)
        .add_root_certificate(cert)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = transport
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["secure"], true);
    assert_eq!(value["version"], "HTTP/1.1");
    transport.close().await;
    server.abort();
}

#[tokio::test]
async fn http2_is_used_when_alpn_offers_it() {
    let (url, cert, server) = tls_server(true).await;
    let transport = HttpTransportBuilder::new(url)
        .add_root_certificate(cert)
        .build(ConnectionHandlers::discard())
        .unwrap();
    for id in 1..=3 {
        let value = transport
            .request(Request::new(id, "ping", None), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(value["version"], "HTTP/2.0");
    }
    transport.close().await;
    server.abort();
}

#[tokio::test]
async fn without_its_root_the_server_is_unreachable_with_a_clear_cause() {
    let (url, _cert, server) = tls_server(false).await;
    let transport = HttpTransportBuilder::new(url)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await;
    let Err(TransportError::Unreachable { cause }) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(cause.to_lowercase().contains("certificate"), "{cause}");
    transport.close().await;
    server.abort();
}

/// A CONNECT proxy on loopback that records each request line and tunnels.
async fn connect_proxy() -> (
    String,
    Arc<std::sync::Mutex<Vec<String>>>,
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let record = record.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let line = head.lines().next().unwrap_or_default().to_owned();
                record.lock().unwrap().push(line.clone());
                let target = line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let Ok(mut upstream) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let _ = client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (url, seen, task)
}

#[tokio::test]
async fn https_goes_through_a_connect_proxy_unless_no_proxy_covers_the_host() {
    use mcp_transport_http::ProxyConfig;
    let (url, cert, server) = tls_server(false).await;
    let (proxy_url, proxy_seen, proxy) = connect_proxy().await;
    let through = HttpTransportBuilder::new(url.clone())
        .add_root_certificate(cert.clone())
        .proxy(ProxyConfig::Explicit {
            http: None,
            https: Some(proxy_url.clone()),
            no_proxy: None,
        })
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = through
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["secure"], true);
    let host = url
        .trim_start_matches("https://")
        .trim_end_matches("/mcp")
        .to_owned();
    assert_eq!(
        proxy_seen.lock().unwrap().clone(),
        [format!("CONNECT {host} HTTP/1.1")]
    );
    through.close().await;

    let direct = HttpTransportBuilder::new(url)
        .add_root_certificate(cert)
        .proxy(ProxyConfig::Explicit {
            http: None,
            https: Some(proxy_url),
            no_proxy: Some("127.0.0.1".into()),
        })
        .build(ConnectionHandlers::discard())
        .unwrap();
    direct
        .request(Request::new(2, "ping", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(proxy_seen.lock().unwrap().len(), 1, "NO_PROXY went direct");
    direct.close().await;
    proxy.abort();
    server.abort();
}

#[tokio::test]
async fn mutual_tls_presents_the_client_certificate() {
    use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair};
    // A CA for clients, and a client certificate it signs.
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(vec!["client.test".to_owned()]).unwrap();
    client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client_params.signed_by(&client_key, &ca, &ca_key).unwrap();

    // A server that requires a client certificate from that CA.
    let server_cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let server_der = server_cert.cert.der().to_vec();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut client_roots = rustls::RootCertStore::empty();
    client_roots.add(ca.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(client_roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(server_der.clone())],
            rustls::pki_types::PrivateKeyDer::try_from(server_cert.key_pair.serialize_der())
                .unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(socket).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    |_r: http::Request<hyper::body::Incoming>| async move {
                        let answer = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"mutual": true}});
                        Ok::<_, Infallible>(
                            http::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(answer.to_string())))
                                .unwrap(),
                        )
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });

    let with = HttpTransportBuilder::new(url.clone())
        .add_root_certificate(server_der.clone())
        .client_certificate(vec![client_cert.der().to_vec()], client_key.serialize_der())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = with
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["mutual"], true);
    with.close().await;

    let without = HttpTransportBuilder::new(url)
        .add_root_certificate(server_der)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let refused = without
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await;
    assert!(refused.is_err(), "{refused:?}");
    without.close().await;
    server.abort();
}

/// The platform's store, pointed at a file holding the server's root
/// (`SSL_CERT_FILE`, which the platform loader honours on Unix): trusted
/// with no root configured in the builder and the Mozilla set off.
#[cfg(feature = "platform-roots")]
#[tokio::test]
async fn the_platform_roots_are_trusted_with_the_feature() {
    use base64::Engine as _;
    let (url, cert, server) = tls_server(false).await;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&cert);
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    );
    let path = std::env::temp_dir().join(format!("mcp-platform-root-{}.pem", std::process::id()));
    std::fs::write(&path, pem).unwrap();
    // SAFETY: nextest runs each test in a process of its own, and nothing
    // else in this test reads the environment concurrently.
    unsafe { std::env::set_var("SSL_CERT_FILE", &path) };
    let transport = HttpTransportBuilder::new(url)
        .webpki_roots(false)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = transport
        .request(Request::new(1, "ping", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["secure"], true);
    transport.close().await;
    server.abort();
    let _ = std::fs::remove_file(path);
}
