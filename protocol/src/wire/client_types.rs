//! The `t` of every client message, and the rid any request carries.

use super::{
    AnalysisRequestBody, AnalysisResultBody, AnalysisServeBody, ClientMessage, ExploreRequest,
    LessonDone, LessonsProgressRequest, ReportRequest, Rid,
};

/// Every `t` a client may send, in [`ClientMessage`] order.
pub const CLIENT_TYPES: &[&str] = &[
    "hello",
    "ping",
    "game.watch",
    "game.unwatch",
    "game.legal",
    "game.move",
    "game.resign",
    "game.draw",
    "game.abort",
    "game.claim",
    "game.rematch",
    "room.create",
    "room.join",
    "room.leave",
    "queue.join",
    "queue.leave",
    "lobby.watch",
    "lobby.unwatch",
    "game.record",
    "history",
    "bot.serve",
    "bot.play",
    "analysis.request",
    "analysis.serve",
    "analysis.result",
    "player",
    "leaderboard",
    "chat.say",
    "chat.mute",
    "chat.spectators",
    "link.code",
    "link.redeem",
    "devices",
    "device.revoke",
    "room.watch",
    "room.unwatch",
    "room.say",
    "arena.create",
    "arena.watch",
    "arena.unwatch",
    "arena.join",
    "arena.pause",
    "arena.cancel",
    "game.berserk",
    "account",
    "account.claim",
    "account.login",
    "account.password",
    "account.logout",
    "position.explore",
    "lesson.done",
    "lessons.progress",
    "report",
];

impl ClientMessage {
    /// The request's rid, if any.
    pub fn rid(&self) -> Option<&Rid> {
        match self {
            ClientMessage::Hello { rid, .. }
            | ClientMessage::Ping { rid }
            | ClientMessage::GameWatch { rid, .. }
            | ClientMessage::GameUnwatch { rid, .. }
            | ClientMessage::GameLegal { rid, .. }
            | ClientMessage::GameMove { rid, .. }
            | ClientMessage::GameResign { rid, .. }
            | ClientMessage::GameDraw { rid, .. }
            | ClientMessage::GameAbort { rid, .. }
            | ClientMessage::GameClaim { rid, .. }
            | ClientMessage::GameRematch { rid, .. }
            | ClientMessage::RoomCreate { rid, .. }
            | ClientMessage::RoomJoin { rid, .. }
            | ClientMessage::RoomLeave { rid, .. }
            | ClientMessage::QueueJoin { rid, .. }
            | ClientMessage::QueueLeave { rid }
            | ClientMessage::LobbyWatch { rid }
            | ClientMessage::LobbyUnwatch { rid }
            | ClientMessage::GameRecord { rid, .. }
            | ClientMessage::History { rid, .. }
            | ClientMessage::BotServe { rid, .. }
            | ClientMessage::BotPlay { rid, .. }
            | ClientMessage::AnalysisRequest(AnalysisRequestBody { rid, .. })
            | ClientMessage::AnalysisServe(AnalysisServeBody { rid, .. })
            | ClientMessage::AnalysisResult(AnalysisResultBody { rid, .. })
            | ClientMessage::Player { rid, .. }
            | ClientMessage::Leaderboard { rid, .. }
            | ClientMessage::ChatSay { rid, .. }
            | ClientMessage::ChatMute { rid, .. }
            | ClientMessage::ChatSpectators { rid, .. }
            | ClientMessage::LinkCode { rid }
            | ClientMessage::LinkRedeem { rid, .. }
            | ClientMessage::Devices { rid }
            | ClientMessage::DeviceRevoke { rid, .. }
            | ClientMessage::RoomWatch { rid, .. }
            | ClientMessage::RoomUnwatch { rid, .. }
            | ClientMessage::RoomSay { rid, .. }
            | ClientMessage::ArenaCreate { rid, .. }
            | ClientMessage::ArenaWatch { rid, .. }
            | ClientMessage::ArenaUnwatch { rid, .. }
            | ClientMessage::ArenaJoin { rid, .. }
            | ClientMessage::ArenaPause { rid, .. }
            | ClientMessage::ArenaCancel { rid, .. }
            | ClientMessage::GameBerserk { rid, .. }
            | ClientMessage::Account { rid }
            | ClientMessage::AccountClaim { rid, .. }
            | ClientMessage::AccountLogin { rid, .. }
            | ClientMessage::AccountPassword { rid, .. }
            | ClientMessage::AccountLogout { rid }
            | ClientMessage::PositionExplore(ExploreRequest { rid, .. })
            | ClientMessage::LessonDone(LessonDone { rid, .. })
            | ClientMessage::LessonsProgress(LessonsProgressRequest { rid })
            | ClientMessage::Report(ReportRequest { rid, .. }) => rid.as_ref(),
        }
    }

    /// The message's `t`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientMessage::Hello { .. } => "hello",
            ClientMessage::Ping { .. } => "ping",
            ClientMessage::GameWatch { .. } => "game.watch",
            ClientMessage::GameUnwatch { .. } => "game.unwatch",
            ClientMessage::GameLegal { .. } => "game.legal",
            ClientMessage::GameMove { .. } => "game.move",
            ClientMessage::GameResign { .. } => "game.resign",
            ClientMessage::GameDraw { .. } => "game.draw",
            ClientMessage::GameAbort { .. } => "game.abort",
            ClientMessage::GameClaim { .. } => "game.claim",
            ClientMessage::GameRematch { .. } => "game.rematch",
            ClientMessage::RoomCreate { .. } => "room.create",
            ClientMessage::RoomJoin { .. } => "room.join",
            ClientMessage::RoomLeave { .. } => "room.leave",
            ClientMessage::QueueJoin { .. } => "queue.join",
            ClientMessage::QueueLeave { .. } => "queue.leave",
            ClientMessage::LobbyWatch { .. } => "lobby.watch",
            ClientMessage::LobbyUnwatch { .. } => "lobby.unwatch",
            ClientMessage::GameRecord { .. } => "game.record",
            ClientMessage::History { .. } => "history",
            ClientMessage::BotServe { .. } => "bot.serve",
            ClientMessage::BotPlay { .. } => "bot.play",
            ClientMessage::AnalysisRequest(_) => "analysis.request",
            ClientMessage::AnalysisServe(_) => "analysis.serve",
            ClientMessage::AnalysisResult(_) => "analysis.result",
            ClientMessage::Player { .. } => "player",
            ClientMessage::Leaderboard { .. } => "leaderboard",
            ClientMessage::ChatSay { .. } => "chat.say",
            ClientMessage::ChatMute { .. } => "chat.mute",
            ClientMessage::ChatSpectators { .. } => "chat.spectators",
            ClientMessage::LinkCode { .. } => "link.code",
            ClientMessage::LinkRedeem { .. } => "link.redeem",
            ClientMessage::Devices { .. } => "devices",
            ClientMessage::DeviceRevoke { .. } => "device.revoke",
            ClientMessage::RoomWatch { .. } => "room.watch",
            ClientMessage::RoomUnwatch { .. } => "room.unwatch",
            ClientMessage::RoomSay { .. } => "room.say",
            ClientMessage::ArenaCreate { .. } => "arena.create",
            ClientMessage::ArenaWatch { .. } => "arena.watch",
            ClientMessage::ArenaUnwatch { .. } => "arena.unwatch",
            ClientMessage::ArenaJoin { .. } => "arena.join",
            ClientMessage::ArenaPause { .. } => "arena.pause",
            ClientMessage::ArenaCancel { .. } => "arena.cancel",
            ClientMessage::GameBerserk { .. } => "game.berserk",
            ClientMessage::Account { .. } => "account",
            ClientMessage::AccountClaim { .. } => "account.claim",
            ClientMessage::AccountLogin { .. } => "account.login",
            ClientMessage::AccountPassword { .. } => "account.password",
            ClientMessage::AccountLogout { .. } => "account.logout",
            ClientMessage::PositionExplore(_) => "position.explore",
            ClientMessage::LessonDone(_) => "lesson.done",
            ClientMessage::LessonsProgress(_) => "lessons.progress",
            ClientMessage::Report(_) => "report",
        }
    }
}
