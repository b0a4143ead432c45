"""metric"""
