//! The server URL rule (`config::ServerUrl`): every URL it accepts round-trips, and a key in
//! the userinfo shows in no `Debug`, `Display`, warning or error text of the URL, the
//! configuration, the client or its errors.

use std::net::TcpListener;

use ov_engine::client::{Client, ClientConfig, OutMessage};
use ov_engine::config::{self, LoadContext, Scheme, Secret, ServerUrl};
use proptest::prelude::*;

use crate::projector_support::cases;

/// Every byte outside the unreserved set as `%XX`.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A key no other text of these types holds by chance (`sk-Q7…`), with the characters a
/// userinfo must encode.
fn key() -> impl Strategy<Value = String> {
    "sk-Q7[A-Za-z0-9@:/?#% é~+=]{0,16}"
}

fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{0,10}(\\.[a-z]{2,5})?",
        Just("127.0.0.1".to_owned()),
        Just("[::1]".to_owned()),
    ]
}

/// The userinfo forms: none, `KEY@`, `user:KEY@`, `KEY:@`.
#[derive(Debug, Clone, Copy)]
enum Form {
    None,
    User,
    Password,
    EmptyPassword,
}

#[derive(Debug, Clone)]
struct Parts {
    scheme: &'static str,
    form: Form,
    user: String,
    key: String,
    host: String,
    port: Option<u16>,
    path: String,
    trailing_slash: bool,
}

impl Parts {
    fn text(&self) -> String {
        let k = percent_encode(&self.key);
        let userinfo = match self.form {
            Form::None => String::new(),
            Form::User => format!("{k}@"),
            Form::Password => format!("{}:{k}@", self.user),
            Form::EmptyPassword => format!("{k}:@"),
        };
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        let slash = if self.trailing_slash { "/" } else { "" };
        format!(
            "{}://{userinfo}{}{port}{}{slash}",
            self.scheme, self.host, self.path
        )
    }
}

fn parts() -> impl Strategy<Value = Parts> {
    (
        prop_oneof![Just("http"), Just("https"), Just("HTTP"), Just("Https")],
        prop_oneof![
            Just(Form::None),
            Just(Form::User),
            Just(Form::Password),
            Just(Form::EmptyPassword)
        ],
        "[a-z]{0,6}",
        key(),
        host(),
        proptest::option::of(any::<u16>()),
        "(/[a-z0-9._~-]{1,8}){0,3}",
        any::<bool>(),
    )
        .prop_map(
            |(scheme, form, user, key, host, port, path, trailing_slash)| Parts {
                scheme,
                form,
                user,
                key,
                host,
                port,
                path,
                trailing_slash,
            },
        )
}

fn ctx(home: &std::path::Path, env: &[(&str, &str)]) -> LoadContext {
    LoadContext {
        cwd: home.to_path_buf(),
        home: home.to_path_buf(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// Every text the configuration and a client built from `url` show: the loaded
/// configuration's `Debug`, each warning, the client's `Debug` or its construction error.
fn shown_texts(home: &std::path::Path, url: &str) -> Vec<String> {
    let loaded = config::load(&ctx(
        home,
        &[("OPENVIKING_URL", url), ("OPENVIKING_MCP_URL", url)],
    ));
    let mut out = vec![format!("{loaded:?}")];
    out.extend(loaded.warnings.iter().map(ToString::to_string));
    if let Some(server) = &loaded.config.server {
        out.push(format!("{server:?} {}", server.url));
    }
    match Client::new(ClientConfig {
        base_url: url.to_owned(),
        ..ClientConfig::default()
    }) {
        Ok(c) => out.push(format!("{c:?} {}", c.base_url())),
        Err(e) => out.push(format!("{e} {e:?}")),
    }
    match ServerUrl::parse(url) {
        Ok(u) => out.push(format!("{u} {u:?} {}", u.as_str())),
        Err(e) => out.push(format!("{e} {e:?}")),
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Every part of an accepted URL comes back as written (scheme lowercase, trailing `/`
    /// dropped, the key percent-decoded), and its text parses to the same URL without key.
    #[test]
    fn every_accepted_url_round_trips(p in parts()) {
        let u = ServerUrl::parse(&p.text()).expect("a well-formed URL is accepted");
        let scheme = if p.scheme.eq_ignore_ascii_case("https") { Scheme::Https } else { Scheme::Http };
        prop_assert_eq!(u.scheme(), scheme);
        prop_assert_eq!(u.host(), p.host.as_str());
        prop_assert_eq!(u.port(), p.port);
        prop_assert_eq!(u.path(), p.path.as_str());
        let key = match p.form {
            Form::None => None,
            _ => Some(p.key.as_str()),
        };
        prop_assert_eq!(u.key().map(Secret::expose), key);
        let again = ServerUrl::parse(u.as_str()).expect("its own text is accepted");
        prop_assert_eq!(&again, &u.clone().split_key().0);
        prop_assert_eq!(again.to_string(), u.to_string());
    }

    /// A key in a well-formed URL's userinfo shows in no text of the URL, the configuration
    /// or the client; and the configuration uses it as the API key.
    #[test]
    fn a_key_in_a_url_is_never_shown(p in parts()) {
        let home = tempfile::tempdir().expect("tmp");
        for text in shown_texts(home.path(), &p.text()) {
            prop_assert!(!text.contains(&p.key), "{}", text);
            prop_assert!(!text.contains(&percent_encode(&p.key)), "{}", text);
        }
        if !matches!(p.form, Form::None) {
            let loaded = config::load(&ctx(home.path(), &[("OPENVIKING_URL", &p.text())]));
            let server = loaded.config.server.expect("a server");
            prop_assert_eq!(server.api_key.as_ref().map(Secret::expose), Some(p.key.as_str()));
        }
    }

    /// A text that is not a URL (a key written unencoded, a stray `?`, a space, no scheme)
    /// is refused without its key showing in the warning, the error or anything else.
    #[test]
    fn a_refused_url_never_shows_its_key(
        before in "(https?://|ftp://|)[a-z:]{0,4}",
        key in key(),
        after in "[@a-z0-9:/?# ]{0,12}",
    ) {
        let text = format!("{before}{key}{after}");
        prop_assume!(ServerUrl::parse(&text).is_err());
        let home = tempfile::tempdir().expect("tmp");
        for shown in shown_texts(home.path(), &text) {
            prop_assert!(!shown.contains(&key), "{}", shown);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// The error of a request to a server that is not there never names the key.
    #[test]
    fn a_request_error_never_shows_the_key(key in key(), path in "(/[a-z]{1,5}){0,2}") {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let url = format!("http://u:{}@127.0.0.1:{port}{path}", percent_encode(&key));
        let c = Client::new(ClientConfig { base_url: url, ..ClientConfig::default() })
            .expect("client");
        let one = vec![OutMessage {
            role: "user".into(),
            parts: None,
            content: "hi".into(),
            turn_id: None,
            created_at: None,
            message_kind: None,
        }];
        let e = c.add_batch("zc-s", &one, &|| {}).expect_err("nothing listens");
        let shown = format!("{e} {e:?} {c:?}");
        prop_assert!(!shown.contains(&key), "{}", shown);
    }
}
