/* replay.h - a recording run again: its answers, its inputs, the compare
 *
 * What agentrt-session replay makes of an export (art_export()'s lines,
 * as art_import_check() passes them: line 0 the header, then events),
 * with no process, store or file: the cassette agentrt-llm --replay
 * plays, the tape agentrt-tool --replay plays, the agent files as the
 * recording started them, and the client inputs to send again.  Then,
 * from the events of the recorded session and of the new one, what each
 * did (the model calls it asked for, the tool calls, the messages and how
 * each turn ended) and the first place the two differ.
 *
 * Every function borrows its arguments and returns a new jv the caller
 * owns; none keeps state, so any thread or process may call them.
 */
#ifndef ART_REPLAY_H
#define ART_REPLAY_H

#include <stdbool.h>

#include <jv.h>

/* The events of session sid among export lines, in order.  A new array. */
jv	art_replay_events(const jv *lines, const char *sid);

/*
 * The cassette of export lines: for each llm.call.completed, the line
 * art_cassette_line() makes of its llm.call.requested's request (and
 * stream flag) with the response it got, in the order the calls
 * completed, of every session in the lines.  A call with no request
 * before it is left out.  A new array.
 */
jv	art_replay_cassette(const jv *lines);

/*
 * The tape of export lines: for each tool.call.completed or
 * tool.call.errored, the line art_tooltape_line() makes of its
 * tool.call.requested's name and arguments with that result or error, in
 * the order the calls finished.  A call with no request before it, or
 * whose answer holds neither, is left out.  A new array.
 */
jv	art_replay_tape(const jv *lines);

/*
 * The agent files as the recording used them: an object of agent id to
 * the AgentConfig a session's session.start decision carried, for each
 * session whose session.created names its agent_id (when two sessions of
 * one agent started, the later one's).  A new object.
 */
jv	art_replay_agent_files(const jv *lines);

/*
 * The client inputs among a session's events, in order: the trigger of
 * each queued client.message, client.messages or client.action decision,
 * an input line to send again, and {"resume": PAYLOAD} for each
 * session.interrupt_resumed.  A new array.
 */
jv	art_replay_inputs(const jv *events);

/*
 * What the event ev shows of the session's behaviour, to compare:
 * {"type":T, ..., "seq":N} with, by type, llm.call.requested's model and
 * messages (as art_cassette_messages() compares them), tool.call.
 * requested's name and arguments, message.new's message without any "id"
 * member, turn.completed's data and error, session.interrupted's reason.
 * jv_invalid() for any other event: ids, times and bookkeeping.
 */
jv	art_replay_observed(const jv *ev);

/*
 * The observed events of a list of events, in order, but for the answers
 * of parallel calls: recorded as they finish, in any order, so each run
 * of tool messages is sorted by tool_call_id.  A new array.
 */
jv	art_replay_behaviour(const jv *events);

/*
 * The first place behaviours want (recorded) and got (replayed) differ,
 * each entry's seq aside, as a line for the new session sid:
 *
 *	{"type":"replay.divergence","session":SID,
 *	 "event":{"index":I,"type":T,"expected_seq":N,"actual_seq":M},
 *	 "expected":ENTRY,"actual":ENTRY}
 *
 * where a side that ran out is null.  jv_null() when they agree.
 */
jv	art_replay_diverges(const jv *want, const jv *got, const char *sid);

/*
 * The verdict on the new session sid, whose events are got, replaying
 * the recorded session recorded, whose events are want: the
 * art_replay_diverges() line, or when the behaviours agree
 * {"type":"replay.passed","session":SID,"recorded":ID,"events":N} with
 * N the entries compared.  *passed says which.
 */
jv	art_replay_verdict(const jv *want, const jv *got, const char *sid,
	    const char *recorded, bool *passed);

#endif
