//! A web site on 127.0.0.1 for unit tests that must meet real HTTP (an issuer publishing its
//! keys, an authorization server): answers chosen by the request, and a log of what was asked.
//! It is hyper's HTTP/1.1 server, as `serve` runs it, so the client side under test meets the
//! framing, redirects and bodies of a real server.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;

/// A request the site was sent.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub method: String,
    /// The path and query.
    pub target: String,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

/// An answer of the site: a status, headers and a body.
pub(crate) struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// 200 with a JSON body.
    pub fn json(value: serde_json::Value) -> Answer {
        Answer {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: value.to_string().into_bytes(),
        }
    }

    /// A redirect with `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Answer {
        Answer {
            status,
            headers: vec![("location".into(), location.into())],
            body: Vec::new(),
        }
    }

    /// `status` with no body.
    pub fn status(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

type Answering = dyn Fn(&Asked) -> Answer + Send + Sync;

/// A running site; it stops when dropped.
pub(crate) struct Site {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    asked: Arc<Mutex<Vec<Asked>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Site {
    /// Serves `answer`'s answers on a free port of 127.0.0.1.
    pub async fn start(answer: impl Fn(&Asked) -> Answer + Send + Sync + 'static) -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let answer: Arc<Answering> = Arc::new(answer);
        let log = asked.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (answer, log) = (answer.clone(), log.clone());
                tokio::spawn(serve_connection(socket, answer, log));
            }
        });
        Site { base, asked, task }
    }

    /// `base` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The requests whose path and query start with `prefix`.
    pub fn asked(&self, prefix: &str) -> Vec<Asked> {
        let asked = self.asked.lock().unwrap();
        asked
            .iter()
            .filter(|a| a.target.starts_with(prefix))
            .cloned()
            .collect()
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_connection(
    socket: tokio::net::TcpStream,
    answer: Arc<Answering>,
    log: Arc<Mutex<Vec<Asked>>>,
) {
    let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let (answer, log) = (answer.clone(), log.clone());
        async move {
            let asked = read(request).await;
            let reply = answer(&asked);
            log.lock().unwrap().push(asked);
            Ok::<_, Infallible>(respond(reply))
        }
    });
    let io = hyper_util::rt::TokioIo::new(socket);
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .await;
}

async fn read(request: hyper::Request<hyper::body::Incoming>) -> Asked {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes().to_vec());
    Asked {
        method: parts.method.to_string(),
        target: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: parts.headers,
        body: body.unwrap_or_default(),
    }
}

fn respond(answer: Answer) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        response = response.header(name, value);
    }
    response.body(Full::new(Bytes::from(answer.body))).unwrap()
}
