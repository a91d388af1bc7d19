//! [`ApiError`]: every refusal of the HTTP face, answered as JSON
//! `{"error": kind, "message": text}` with its status code.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::error::{ControllerError, RuntimeError};

/// A refusal: its status, a stable snake_case `kind`, a text for people (not a stable
/// format; never holds a token), and for 429/503 when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    message: &'a str,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400: the request is malformed.
    pub(crate) fn bad_request(kind: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, kind, message)
    }

    /// 404: no such task, slot, group or route.
    pub(crate) fn not_found(kind: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, kind, message)
    }

    /// 503 `busy` (or 429 `rate_limited` when `rate`), to be retried after `after`.
    pub(crate) fn busy(rate: bool, after: Duration, message: impl Into<String>) -> Self {
        let (status, kind) = if rate {
            (StatusCode::TOO_MANY_REQUESTS, "rate_limited")
        } else {
            (StatusCode::SERVICE_UNAVAILABLE, "busy")
        };
        ApiError {
            retry_after: Some(after),
            ..Self::new(status, kind, message)
        }
    }

    /// The supervisor's error, with the status that says whose fault it is.
    pub(crate) fn runtime(error: &RuntimeError) -> Self {
        let text = error.to_string();
        match error {
            RuntimeError::TaskNotFound { .. } => Self::not_found("unknown_task", text),
            RuntimeError::GroupNotFound { .. } => Self::not_found("unknown_group", text),
            RuntimeError::Controller(ControllerError::UnknownSlot) => {
                Self::not_found("unknown_slot", text)
            }
            RuntimeError::Controller(ControllerError::NotConfigured) => {
                Self::not_found("no_controller", text)
            }
            RuntimeError::ShuttingDown => Self::new(StatusCode::CONFLICT, "shutting_down", text),
            RuntimeError::CommandQueueFull => Self::busy(false, Duration::from_millis(100), text),
            _ => Self::new(StatusCode::INTERNAL_SERVER_ERROR, "supervisor_error", text),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: self.kind,
            message: &self.message,
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(after) = self.retry_after {
            let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
            if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}
