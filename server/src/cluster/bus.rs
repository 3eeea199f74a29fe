//! The bus: Redis pub/sub between the nodes — a channel per game for its events, one per
//! node for requests and answers — and the loop that routes what arrives.

use super::*;

impl Cluster {
    pub(super) fn channel(&self, parts: &[&str]) -> String {
        let mut p = vec!["bus"];
        p.extend_from_slice(parts);
        self.store.key(&p)
    }

    pub(super) fn game_channel(&self, game: &str) -> String {
        self.channel(&["game", game])
    }

    pub(super) fn node_channel(&self, node: &str) -> String {
        self.channel(&["node", node])
    }

    /// The live game `id` as this node can serve it: a follower of the owner, started from
    /// the log. `Ok(None)` when the game is not live anywhere (unknown or finished); an
    /// error when Redis cannot tell now (a live game is never reported missing because a
    /// read timed out).
    pub async fn attach(
        &self,
        hub: &Arc<Hub>,
        id: &str,
    ) -> Result<Option<crate::game::GameHandle>, StoreError> {
        let _one = self.attaching.lock().await;
        if let Some(h) = hub.games.get(id) {
            return Ok(Some(h));
        }
        if hub.store.finished_game(id).await?.is_some() || hub.store.game(id).await?.is_none() {
            return Ok(None);
        }
        // Subscribed before the log is read: an event logged after the read arrives on the
        // channel; one logged before is in the log (the follower heals at its start).
        self.subscribe(&self.game_channel(id))
            .await
            .map_err(StoreError::Unavailable)?;
        lock(&self.followed).insert(id.to_string());
        match crate::recovery::follow(hub, id).await {
            Ok(h) => Ok(Some(h)),
            Err(e) => {
                tracing::warn!(game = %id, error = %e, "cannot follow the game");
                self.unfollow(id);
                match e {
                    crate::recovery::RecoveryError::Store(e) => Err(e),
                    _ => Ok(None),
                }
            }
        }
    }

    pub(super) async fn subscribe(&self, channel: &str) -> Result<(), String> {
        let sink = lock(&self.sink).clone();
        match sink {
            Some(mut sink) => sink.subscribe(channel).await.map_err(|e| e.to_string()),
            None => Err("the cluster bus is disconnected".into()),
        }
    }

    /// Announces a game started on this node to the others (they tell its players).
    pub async fn started(
        &self,
        handle: &crate::game::GameHandle,
        side_names: [&str; 2],
        room: Option<String>,
    ) {
        let msg = BusMessage::Started {
            game: handle.id.clone(),
            kind: handle.kind.clone(),
            players: handle.players.clone(),
            side_names: side_names.map(str::to_string),
            room,
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
            match self.client.get_async_pubsub().await {
                Ok(pubsub) => {
                    let (mut sink, mut stream) = pubsub.split();
                    let mut channels = vec![self.node_channel(&self.node), self.channel(&["push"])];
                    let followed: Vec<String> = lock(&self.followed).iter().cloned().collect();
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
                        while let Some(msg) = stream.next().await {
                            let Ok(text) = msg.get_payload::<String>() else {
                                continue;
                            };
                            if let (Some(sent), Some(hub)) = (messages::sent_ms(&text), self.hub())
                            {
                                hub.metrics.bus_message(sent, messages::wall_ms());
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
            if self.hub().is_none() && !first {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub(super) async fn heal_followers(&self, games: &[String]) {
        let Some(hub) = self.hub() else {
            return;
        };
        for g in games {
            if let Some(h) = hub.games.get(g) {
                // Messages may have been lost while disconnected: the log tells.
                let _ = h.tx.send(Command::Heal).await;
            }
        }
    }

    pub(super) async fn dispatch(&self, msg: BusMessage) {
        let Some(hub) = self.hub() else {
            return;
        };
        match &msg {
            BusMessage::Started {
                game,
                players,
                side_names,
                room,
                origin,
                ..
            } => {
                {
                    let mut queued = lock(&self.queued_here);
                    for p in players {
                        queued.remove(p);
                    }
                }
                if *origin == self.node {
                    return;
                }
                if let Some(code) = room {
                    hub.rooms.started(code, game);
                }
                let here: Vec<usize> = (0..2)
                    .filter(|&i| !hub.players.connections(&players[i]).is_empty())
                    .collect();
                if here.is_empty() {
                    return;
                }
                let Ok(Some(handle)) = self.attach(&hub, game).await else {
                    return;
                };
                for i in here {
                    for conn in hub.players.connections(&players[i]) {
                        hub.announce_to(&handle, &side_names[i], &conn).await;
                    }
                }
            }
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
                let mm = &hub.matchmaker;
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
                    hub.matchmaker.leave(player);
                }
            }
            BusMessage::Queued { req, position } => {
                if let Some(tx) = lock(&self.pending).remove(req) {
                    let _ = tx.send(*position);
                }
            }
            BusMessage::ToPlayer { player, frame } => {
                for conn in hub.players.connections(player) {
                    conn.send(axum::extract::ws::Utf8Bytes::from(frame.clone()));
                }
            }
            BusMessage::Event { game, .. }
            | BusMessage::Crowd { game, .. }
            | BusMessage::Owner { game, .. }
            | BusMessage::Reply { game, .. } => {
                if let Some(h) = hub.games.get(game) {
                    let _ = h.tx.send(Command::Bus(msg)).await;
                }
            }
            BusMessage::Request {
                game, from, req, ..
            } => match hub.games.get(game) {
                Some(h) => {
                    let _ = h.tx.send(Command::Bus(msg)).await;
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
            },
        }
    }
}
