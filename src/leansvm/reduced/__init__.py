"""Kernel models of a chosen size trained straight from the labels, without an exact SVM first."""
