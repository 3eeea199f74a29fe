//! The bus: Redis pub/sub between the nodes — a channel per game for its events, one per
//! node for requests and answers — and the loop that routes what arrives.

use super::*;
use crate::ids::GameId;

impl Cluster {
    pub(super) fn channel(&self, parts: &[&str]) -> String {
        let mut p = vec!["bus"];
        p.extend_from_slice(parts);
        self.store.key(&p)
    }

    pub(super) fn game_channel(&self, game: &GameId) -> String {
        self.channel(&["game", game.as_str()])
    }

    pub(super) fn node_channel(&self, node: &str) -> String {
        self.channel(&["node", node])
    }

    /// Subscribes to a game's channel and notes it followed (its subscription is renewed
    /// after every reconnect of the bus).
    pub(super) async fn follow_channel(&self, game: &GameId) -> Result<(), StoreError> {
        self.subscribe(&self.game_channel(game))
            .await
            .map_err(StoreError::Unavailable)?;
        lock(&self.followed).insert(game.clone());
        Ok(())
    }

    pub(super) async fn subscribe(&self, channel: &str) -> Result<(), String> {
        let sink = lock(&self.sink).clone();
        match sink {
            Some(mut sink) => sink.subscribe(channel).await.map_err(|e| e.to_string()),
            None => Err("the cluster bus is disconnected".into()),
        }
    }

    /// Announces a game started on this node to the others (they tell its players).
    pub(super) async fn announce_started(&self, started: StartedGame) {
        let msg = BusMessage::Started {
            game: started.game,
            kind: started.kind.id.to_string(),
            players: started.players,
            side_names: started.side_names,
            room: started.room,
            origin: self.node.clone(),
        };
        self.publish_on(&self.channel(&["push"]), &msg).await;
    }

    pub(super) async fn publish_on(&self, channel: &str, msg: &BusMessage) -> i64 {
        self.publish_counted(channel, msg).await.unwrap_or(0)
    }

    /// Publishes and counts the receivers; `None` when the publish was sent but its answer
    /// lost (it may still reach them: a slow or partitioned link delivers late), `Some(0)`
    /// when it certainly reached nobody.
    pub(super) async fn publish_counted(&self, channel: &str, msg: &BusMessage) -> Option<i64> {
        let mut conn = self.bus.clone();
        match self
            .store
            .call(conn.publish::<_, _, i64>(channel, msg.encode_at(messages::wall_ms())))
            .await
        {
            Ok(n) => Some(n),
            Err(e @ StoreError::InDoubt(_)) => {
                tracing::warn!(error = %e, "bus publish in doubt");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "bus publish failed");
                Some(0)
            }
        }
    }

    /// Keeps this node's subscription: its own channel, the push channel and every
    /// followed game's; after a reconnect, every follower heals from the log.
    pub(super) async fn bus_loop(
        self: Arc<Self>,
        mut ready: Option<tokio::sync::oneshot::Sender<()>>,
    ) {
        let mut first = true;
        loop {
            let (client, mut moved) = match self.bus_client() {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot find the cluster bus");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                }
            };
            match client.get_async_pubsub().await {
                Ok(pubsub) => {
                    let (mut sink, mut stream) = pubsub.split();
                    let mut channels = vec![self.node_channel(&self.node), self.channel(&["push"])];
                    let followed: Vec<GameId> = lock(&self.followed).iter().cloned().collect();
                    channels.extend(followed.iter().map(|g| self.game_channel(g)));
                    if let Err(e) = sink.subscribe(&channels).await {
                        tracing::warn!(error = %e, "bus subscription failed");
                    } else {
                        *lock(&self.sink) = Some(sink);
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                        if !first {
                            tracing::info!("cluster bus reconnected: followers catch up");
                            self.heal_followers(&followed).await;
                        }
                        first = false;
                        loop {
                            let msg = tokio::select! {
                                msg = stream.next() => msg,
                                () = primary_moved(&mut moved) => {
                                    tracing::warn!("redis primary moved: the bus subscribes there");
                                    break;
                                }
                            };
                            let Some(msg) = msg else { break };
                            let Ok(text) = msg.get_payload::<String>() else {
                                continue;
                            };
                            if let Some(sent) = messages::sent_ms(&text) {
                                self.registries
                                    .metrics
                                    .bus_message(sent, messages::wall_ms());
                            }
                            match serde_json::from_str::<BusMessage>(&text) {
                                Ok(m) => self.dispatch(m).await,
                                Err(e) => tracing::warn!(error = %e, "bad bus message"),
                            }
                        }
                        *lock(&self.sink) = None;
                        tracing::warn!("cluster bus disconnected: reconnecting");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot connect the cluster bus"),
            }
            if self.stopped() && !first {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Where to subscribe now: the configured server, or the primary the Sentinels named
    /// last, with a watch that changes when they name another.
    fn bus_client(&self) -> Result<(redis::Client, Option<watch::Receiver<u64>>), String> {
        if let Some(client) = &self.client {
            return Ok((client.clone(), None));
        }
        let follower = self
            .bus
            .follower()
            .ok_or("the bus has neither a server nor a sentinel")?;
        // Watched before the address is read: a switch in between is seen as a change.
        let moved = follower.switches();
        let addr = follower.address();
        let client = redis::Client::open(format!("redis://{addr}/"))
            .map_err(|e| format!("bad primary address {addr}: {e}"))?;
        Ok((client, Some(moved)))
    }

    pub(super) async fn heal_followers(&self, games: &[GameId]) {
        for g in games {
            if let Some(h) = self.registries.games.get(g) {
                // Messages may have been lost while disconnected: the log tells.
                let _ = h.tx.send(Command::Heal).await;
            }
        }
    }

    pub(super) async fn dispatch(&self, msg: BusMessage) {
        let games = &self.registries.games;
        match &msg {
            BusMessage::Started { .. } => self.on_started(msg).await,
            BusMessage::QueueJoin {
                from,
                req,
                key,
                seat,
                rating,
            } => {
                if !self.is_matchmaker() {
                    return;
                }
                let mm = &self.registries.queues;
                let joined = mm.join(key.clone(), seat.clone(), *rating, mm.now_ms());
                let reply = BusMessage::Queued {
                    req: *req,
                    position: joined.position as u64,
                };
                self.publish_on(&self.node_channel(from), &reply).await;
            }
            BusMessage::Released { node } => {
                if *node != self.node {
                    self.wake.notify_one();
                }
            }
            BusMessage::QueueLeave { player } => {
                if self.is_matchmaker() {
                    self.registries.queues.leave(player);
                }
            }
            BusMessage::Queued { req, position } => {
                if let Some(tx) = lock(&self.pending).remove(req) {
                    let _ = tx.send(*position);
                }
            }
            BusMessage::ToPlayer { player, frame } => {
                let frame = crate::net::frame::Frame::text(frame);
                for conn in self.registries.players.connections(player) {
                    conn.send(frame.clone());
                }
            }
            BusMessage::DeviceRevoked { player, device } => {
                let ended = self.registries.players.end_device(player, device);
                if ended > 0 {
                    tracing::info!(player = %player, device = %device, ended, "revoked device's connections ended");
                }
            }
            BusMessage::RoomLine { code, line, origin } => {
                if *origin != self.node {
                    let _ = self.events.send(ClusterEvent::RoomLine {
                        code: code.clone(),
                        line: line.clone(),
                    });
                }
            }
            BusMessage::Event { game, .. }
            | BusMessage::Crowd { game, .. }
            | BusMessage::Chat { game, .. }
            | BusMessage::Owner { game, .. }
            | BusMessage::Rewound { game, .. }
            | BusMessage::Reply { game, .. } => {
                if let Some(h) = games.get(game) {
                    let _ = h.tx.send(Command::Bus(Box::new(msg))).await;
                }
            }
            BusMessage::Request { .. } => self.on_request(msg).await,
        }
    }

    /// A game started on another node: its players queued here are no longer waiting, and
    /// this node's services tell those connected here (awaited, so the game's next events
    /// find its follower).
    async fn on_started(&self, msg: BusMessage) {
        let BusMessage::Started {
            game,
            kind,
            players,
            side_names,
            room,
            origin,
        } = msg
        else {
            return;
        };
        {
            let mut queued = lock(&self.queued_here);
            for p in &players {
                queued.remove(p);
            }
        }
        if origin == self.node {
            return;
        }
        // A kind this node does not know (a newer node's): it could not follow the game.
        let Ok(kind) = stoa_protocol::kind(&kind) else {
            tracing::warn!(game = %game, kind = %kind, "a game of an unknown kind started elsewhere");
            return;
        };
        let (done, handled) = oneshot::channel();
        let event = ClusterEvent::Started {
            game: StartedGame {
                game,
                kind,
                players,
                side_names,
                room,
            },
            done,
        };
        if self.events.send(event).is_ok() {
            let _ = handled.await;
        }
    }

    /// A command forwarded to this node for a game it owns; answered "changing servers"
    /// when no actor serves the game here (any more).
    async fn on_request(&self, msg: BusMessage) {
        let BusMessage::Request {
            game, from, req, ..
        } = &msg
        else {
            return;
        };
        let games = &self.registries.games;
        match games.get(game) {
            Some(h) => {
                let _ = h.tx.send(Command::Bus(Box::new(msg))).await;
            }
            None => {
                let reply = BusMessage::Reply {
                    game: game.clone(),
                    req: *req,
                    result: Err::<crate::game::Answer, _>(crate::error::ApiError::new(
                        stoa_protocol::wire::ErrorCode::Unavailable,
                        "this game is changing servers: try again in a moment",
                    ))
                    .into(),
                };
                self.publish_on(&self.node_channel(from), &reply).await;
            }
        }
    }
}

/// Resolves when the primary moved (never without Sentinel, or once the follower is gone).
async fn primary_moved(moved: &mut Option<watch::Receiver<u64>>) {
    if let Some(rx) = moved {
        if rx.changed().await.is_ok() {
            return;
        }
    }
    std::future::pending().await
}
