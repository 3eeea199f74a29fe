//! `GET /api/kinds/<kind>`: the static geometry that game documents do not carry.

use serde_json::{json, Value};
use stoa_tests::Server;

fn get(server: &Server, path: &str) -> (u16, Value) {
    let (status, body) = server.http_get(path);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[test]
fn geometry_per_kind_and_options_lines_up_with_the_view() {
    let server = Server::start();
    let (status, staku) = get(&server, "/api/kinds/staku");
    assert_eq!(status, 200, "{staku}");
    assert_eq!(staku["side_names"], json!(["white", "black"]));
    let cells = staku["geometry"]["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 49);
    assert_eq!(cells[0]["name"], "a1");
    assert_eq!(cells[0]["palace"], "white");
    // Options in the query (URL-encoded JSON) change the geometry.
    let (status, unane) = get(
        &server,
        "/api/kinds/unane?options=%7B%22width%22%3A6%2C%22height%22%3A5%7D",
    );
    assert_eq!(status, 200, "{unane}");
    assert_eq!(unane["options"], json!({"width": 6, "height": 5}));
    assert_eq!(unane["geometry"]["names"][0][0], "a5");
    assert_eq!(unane["geometry"]["names"].as_array().map(Vec::len), Some(5));
    // The geometry's arrays line up with a live document's view.
    let kind = stoa_protocol::kind("akunur").unwrap();
    let view = kind.start(&json!({})).unwrap().view();
    let (_, akunur) = get(&server, "/api/kinds/akunur");
    assert_eq!(
        akunur["geometry"]["cells"].as_array().map(Vec::len),
        view["cells"].as_array().map(Vec::len)
    );
}

#[test]
fn unknown_kinds_and_bad_options_are_refused_clearly() {
    let server = Server::start();
    let (status, body) = get(&server, "/api/kinds/chess");
    assert_eq!(status, 404);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("unknown game kind"),
        "{body}"
    );
    let (status, body) = get(&server, "/api/kinds/unane?options=%7Bnot%20json");
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().starts_with("options:"),
        "{body}"
    );
    let (status, body) = get(&server, "/api/kinds/akron?options=%7B%22size%22%3A99%7D");
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("invalid options"),
        "{body}"
    );
}
