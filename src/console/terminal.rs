//! Taking over the terminal with crossterm, and giving it back: on exit (drop), on error,
//! and on a panic anywhere in the process (a panic hook). A panic that the supervisor
//! contains (a task body's) only suspends the console's screen: the loop sees
//! [`Session::take_suspended`] and takes the terminal over again.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// One input from the key reader thread.
pub(super) enum Input {
    /// A key press.
    Key(KeyCode),
    /// Ctrl-C.
    Interrupt,
    /// The terminal was resized.
    Resize,
}

type Hook = Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync + 'static>;

/// Set by the panic hook after it restored the terminal.
static SUSPENDED: AtomicBool = AtomicBool::new(false);
/// Serialises installing and removing the hook (one console at a time owns it).
static HOOK_LOCK: Mutex<()> = Mutex::new(());

fn enter_screen() -> io::Result<()> {
    enable_raw_mode()?;
    if let Err(error) = execute!(io::stdout(), EnterAlternateScreen, crossterm::cursor::Hide) {
        let _ = disable_raw_mode();
        return Err(error);
    }
    Ok(())
}

fn leave_screen() {
    let _ = execute!(io::stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
    let _ = disable_raw_mode();
}

/// The terminal while the console owns it.
pub(super) struct Session {
    pub(super) terminal: Terminal<CrosstermBackend<Stdout>>,
    pub(super) keys: tokio::sync::mpsc::Receiver<Input>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    previous_hook: Option<Hook>,
}

impl Session {
    /// Raw mode, alternate screen, the panic hook and the key reader thread.
    pub(super) fn enter() -> io::Result<Self> {
        enter_screen()?;
        let previous_hook = install_hook();
        let terminal = match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => terminal,
            Err(error) => {
                remove_hook(previous_hook);
                leave_screen();
                return Err(error);
            }
        };
        let (sender, keys) = tokio::sync::mpsc::channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("taskvisor-console-keys".into())
                .spawn(move || read_keys(&stop, &sender))
        };
        let reader = match reader {
            Ok(reader) => reader,
            Err(error) => {
                remove_hook(previous_hook);
                leave_screen();
                return Err(error);
            }
        };
        Ok(Self {
            terminal,
            keys,
            stop,
            reader: Some(reader),
            previous_hook: Some(previous_hook),
        })
    }

    /// After a contained panic restored the terminal: takes it over again and clears it.
    pub(super) fn resume_if_suspended(&mut self) -> io::Result<()> {
        if SUSPENDED.swap(false, Ordering::SeqCst) {
            enter_screen()?;
            self.terminal.clear()?;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        if let Some(previous) = self.previous_hook.take() {
            remove_hook(previous);
        }
        leave_screen();
        SUSPENDED.store(false, Ordering::SeqCst);
    }
}

fn install_hook() -> Hook {
    let _guard = HOOK_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let previous: Hook = Arc::from(std::panic::take_hook());
    let chained = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        leave_screen();
        SUSPENDED.store(true, Ordering::SeqCst);
        chained(info);
    }));
    previous
}

fn remove_hook(previous: Hook) {
    let _guard = HOOK_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    drop(std::panic::take_hook());
    std::panic::set_hook(Box::new(move |info| previous(info)));
}

fn read_keys(stop: &AtomicBool, sender: &tokio::sync::mpsc::Sender<Input>) {
    while !stop.load(Ordering::SeqCst) {
        match event::poll(Duration::from_millis(100)) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => return,
        }
        let input = match event::read() {
            Ok(TermEvent::Key(key)) if key.kind != KeyEventKind::Release => {
                if key.modifiers.contains(KeyModifiers::CONTROL)
                    && matches!(key.code, KeyCode::Char('c'))
                {
                    Input::Interrupt
                } else {
                    Input::Key(key.code)
                }
            }
            Ok(TermEvent::Resize(..)) => Input::Resize,
            Ok(_) => continue,
            Err(_) => return,
        };
        // Never block on a full channel: a burst of keys beyond 64 is dropped.
        if let Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) = sender.try_send(input) {
            return;
        }
    }
}
